// A small Markdown renderer for model text: headings, paragraphs, lists (nested by indent),
// block quotes, fenced code, rules, `code`, **bold**, *italic*, [links](https://...).
// Every piece of source text is HTML-escaped before any tag is added, and links keep only
// http(s), mailto and relative targets, so the result is safe to assign to innerHTML.

export function escapeHTML(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const safeURL = (u) => /^(https?:\/\/|mailto:|\/|#)/i.test(u);

// inline renders one line of source text (not yet escaped).
function inline(src) {
  const slots = [];
  const hold = (html) => `\u0000${slots.push(html) - 1}\u0000`;
  let t = src.replace(/\u0000/g, '');
  t = t.replace(/`([^`\n]+)`/g, (_, code) => hold(`<code>${escapeHTML(code)}</code>`));
  t = t.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (m, text, url) => safeURL(url)
    ? hold(`<a href="${escapeHTML(url)}" rel="noopener noreferrer" target="_blank">${inline(text)}</a>`)
    : hold(escapeHTML(text)));
  t = escapeHTML(t);
  t = t.replace(/\*\*(?=\S)([^*]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/__(?=\S)([^_]*?\S)__/g, '<strong>$1</strong>')
    .replace(/(^|[^*\w])\*(?=\S)([^*]*?\S)\*(?![*\w])/g, '$1<em>$2</em>')
    .replace(/(^|[^_\w])_(?=\S)([^_]*?\S)_(?![_\w])/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([^~]*?\S)~~/g, '<del>$1</del>');
  return t.replace(/\u0000(\d+)\u0000/g, (_, i) => slots[Number(i)]);
}

const fence = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const rule = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const quote = /^\s{0,3}>\s?(.*)$/;

function indentOf(line) {
  return line.match(/^\s*/)[0].replace(/\t/g, '    ').length;
}

// blocks renders a list of lines.
function blocks(lines) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (!line.trim()) { i++; continue; }
    if ((m = line.match(fence))) {
      const close = m[1];
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(close); i++) body.push(lines[i]);
      i++;
      const lang = m[2] ? ` class="language-${escapeHTML(m[2])}"` : '';
      out.push(`<pre><code${lang}>${escapeHTML(body.join('\n'))}</code></pre>`);
      continue;
    }
    if ((m = line.match(heading))) {
      const n = m[1].length;
      out.push(`<h${n}>${inline(m[2])}</h${n}>`);
      i++;
      continue;
    }
    if (rule.test(line)) { out.push('<hr>'); i++; continue; }
    if (quote.test(line)) {
      const body = [];
      while (i < lines.length && (m = lines[i].match(quote))) { body.push(m[1]); i++; }
      out.push(`<blockquote>${blocks(body)}</blockquote>`);
      continue;
    }
    if ((m = line.match(item))) {
      i = list(lines, i, out);
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !fence.test(lines[i]) && !heading.test(lines[i]) &&
      !rule.test(lines[i]) && !quote.test(lines[i]) && !item.test(lines[i])) {
      para.push(lines[i].trim());
      i++;
    }
    out.push(`<p>${para.map(inline).join('\n')}</p>`);
  }
  return out.join('\n');
}

// list renders the list starting at lines[i] into out and returns the index after it. An item
// holds its first line and every following line indented deeper than its marker (blank lines
// included when more indented text follows); its content is rendered as blocks, so nested
// lists work.
function list(lines, i, out) {
  const first = lines[i].match(item);
  const base = indentOf(first[1]);
  const ordered = /\d/.test(first[2]);
  const items = [];
  let loose = false;
  while (i < lines.length) {
    const m = lines[i].match(item);
    if (!m || indentOf(m[1]) !== base || /\d/.test(m[2]) !== ordered) break;
    const width = m[1].length + m[2].length + 1;
    const body = [m[3]];
    for (i++; i < lines.length; i++) {
      const l = lines[i];
      if (!l.trim()) {
        const next = lines.slice(i + 1).find((x) => x.trim());
        if (next !== undefined && indentOf(next) > base) { body.push(''); continue; }
        if (next !== undefined && item.test(next) && indentOf(next.match(item)[1]) === base) loose = true;
        break;
      }
      if (indentOf(l) <= base) break;
      body.push(l.slice(Math.min(indentOf(l), width)));
    }
    items.push(body);
    while (i < lines.length && !lines[i].trim()) {
      const next = lines.slice(i).find((x) => x.trim());
      if (next === undefined || !item.test(next) || indentOf(next.match(item)[1]) !== base) break;
      i++;
    }
  }
  const tag = ordered ? 'ol' : 'ul';
  const start = ordered ? parseInt(first[2], 10) : 1;
  const attr = ordered && start !== 1 ? ` start="${start}"` : '';
  const lis = items.map((body) => {
    let html = blocks(body);
    if (!loose) html = html.replace(/^<p>([\s\S]*?)<\/p>/, '$1');
    return `<li>${html}</li>`;
  });
  out.push(`<${tag}${attr}>${lis.join('')}</${tag}>`);
  return i;
}

// renderMarkdown returns safe HTML for Markdown source text.
export function renderMarkdown(src) {
  return blocks(String(src ?? '').replace(/\r\n?/g, '\n').split('\n'));
}
