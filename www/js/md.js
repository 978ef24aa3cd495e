// The Markdown of OpenAPI descriptions as DOM nodes (never as HTML text): paragraphs,
// ## headings, - and 1. lists, `code`, **bold**, [links](http..., #..., relative).

function inline(text) {
  const out = document.createDocumentFragment();
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (let m; (m = re.exec(text));) {
    out.append(text.slice(last, m.index));
    if (m[1] !== undefined) {
      const c = document.createElement('code');
      c.textContent = m[1];
      out.append(c);
    } else if (m[2] !== undefined) {
      const b = document.createElement('strong');
      b.textContent = m[2];
      out.append(b);
    } else if (/^(https?:|#|[./A-Za-z0-9])/.test(m[4]) && !/^[a-z]+:/i.test(m[4].replace(/^https?:/, ''))) {
      const a = document.createElement('a');
      a.href = m[4];
      a.textContent = m[3];
      out.append(a);
    } else out.append(m[0]);
    last = re.lastIndex;
  }
  out.append(text.slice(last));
  return out;
}

// headingLevel: the level a "## " heading of the text becomes (nested in the page).
export function markdown(text, headingLevel = 4) {
  const out = document.createDocumentFragment();
  const blocks = String(text || '').replace(/\r\n?/g, '\n').split(/\n\s*\n/);
  for (const block of blocks) {
    const lines = block.split('\n');
    const h = /^(#{1,6})\s+(.*)$/.exec(lines[0]);
    if (h && lines.length === 1) {
      const e = document.createElement(`h${Math.min(6, headingLevel + h[1].length - 2)}`);
      e.append(inline(h[2]));
      out.append(e);
      continue;
    }
    const item = /^\s*(?:[-*]|(\d+)\.)\s+/;
    if (item.test(lines[0])) {
      const list = document.createElement(item.exec(lines[0])[1] ? 'ol' : 'ul');
      let li = null;
      for (const line of lines) {
        if (item.test(line)) {
          li = document.createElement('li');
          li.append(inline(line.replace(item, '')));
          list.append(li);
        } else li?.append(' ', inline(line.trim()));
      }
      out.append(list);
      continue;
    }
    const p = document.createElement('p');
    p.append(inline(lines.join(' ')));
    out.append(p);
  }
  return out;
}
