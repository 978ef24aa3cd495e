// el(tag, attrs, ...children): an element; attribute `text` is its text, false/null/undefined
// attributes are left out, true is an empty one. Text is never parsed as HTML.
export function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  e.append(...kids.filter((k) => k !== null && k !== undefined));
  return e;
}
