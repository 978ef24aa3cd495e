// Unbounded in-memory storage adapter for oidc-provider.
//
// oidc-provider's built-in memory adapter is an LRU capped at 1000 entries shared by every
// model (sessions, grants, interactions, codes, tokens, registered clients). A few hundred
// user logins or a load test that mints many tokens would silently evict live tokens, and
// they would then introspect as inactive. This adapter keeps everything until it expires.

/**
 * Create one store; returns { Adapter, sweep, stats, entries }. Pass `Adapter` as oidc-provider's
 * `adapter` option (a class whose instances are per model name).
 */
export function createStore() {
  const data = new Map(); // "Model:id" -> { payload, exp (ms epoch or Infinity) }
  const byGrant = new Map(); // "Model:grantId" -> Set of "Model:id"
  const byUid = new Map(); // "Model:uid" -> "Model:id"
  const byUserCode = new Map(); // "Model:userCode" -> "Model:id"

  function live(key) {
    const e = data.get(key);
    if (!e) return undefined;
    if (e.exp <= Date.now()) {
      drop(key);
      return undefined;
    }
    return e;
  }

  function drop(key) {
    const e = data.get(key);
    if (!e) return;
    data.delete(key);
    const { grantId, uid, userCode } = e.payload;
    const model = key.slice(0, key.indexOf(':'));
    if (grantId) byGrant.get(`${model}:${grantId}`)?.delete(key);
    if (uid && byUid.get(`${model}:${uid}`) === key) byUid.delete(`${model}:${uid}`);
    if (userCode && byUserCode.get(`${model}:${userCode}`) === key) {
      byUserCode.delete(`${model}:${userCode}`);
    }
  }

  /** Remove every expired entry (called periodically by the server). */
  function sweep() {
    const now = Date.now();
    for (const [key, e] of data) if (e.exp <= now) drop(key);
    for (const [g, set] of byGrant) if (set.size === 0) byGrant.delete(g);
  }

  /** Number of stored entries, by model name. */
  function stats() {
    const out = {};
    for (const key of data.keys()) {
      const model = key.slice(0, key.indexOf(':'));
      out[model] = (out[model] || 0) + 1;
    }
    return out;
  }

  /** The live entries of one model: [{ id, payload }] (a copy of each payload). */
  function entries(model) {
    const out = [];
    const prefix = `${model}:`;
    for (const key of [...data.keys()]) {
      if (!key.startsWith(prefix)) continue;
      const e = live(key);
      if (e) out.push({ id: key.slice(prefix.length), payload: { ...e.payload } });
    }
    return out;
  }

  class MapAdapter {
    constructor(name) {
      this.name = name;
    }

    key(id) {
      return `${this.name}:${id}`;
    }

    async upsert(id, payload, expiresIn) {
      const key = this.key(id);
      drop(key);
      const exp = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : Infinity;
      data.set(key, { payload: structuredClone(payload), exp });
      if (payload.grantId) {
        const g = this.key(payload.grantId);
        if (!byGrant.has(g)) byGrant.set(g, new Set());
        byGrant.get(g).add(key);
      }
      if (payload.uid) byUid.set(this.key(payload.uid), key);
      if (payload.userCode) byUserCode.set(this.key(payload.userCode), key);
    }

    async find(id) {
      const e = live(this.key(id));
      return e ? { ...e.payload } : undefined;
    }

    async findByUid(uid) {
      const key = byUid.get(this.key(uid));
      const e = key && live(key);
      return e ? { ...e.payload } : undefined;
    }

    async findByUserCode(userCode) {
      const key = byUserCode.get(this.key(userCode));
      const e = key && live(key);
      return e ? { ...e.payload } : undefined;
    }

    async consume(id) {
      const e = live(this.key(id));
      if (e) e.payload.consumed = Math.floor(Date.now() / 1000);
    }

    async destroy(id) {
      drop(this.key(id));
    }

    // Per model, as oidc-provider calls it: its revocation helper picks the models to
    // revoke (e.g. RefreshToken only when the revoking client may use refresh tokens).
    async revokeByGrantId(grantId) {
      const g = this.key(grantId);
      const keys = byGrant.get(g);
      if (!keys) return;
      for (const key of [...keys]) drop(key);
      byGrant.delete(g);
    }
  }

  return { Adapter: MapAdapter, sweep, stats, entries };
}
