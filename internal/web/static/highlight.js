// A small syntax highlighter: one tokenizer per family of languages (C-like, Python, shell,
// YAML, JSON, Markdown, HTML), good enough to tell comments, strings, numbers and keywords
// apart. It returns DOM nodes built with textContent only, so no file can inject markup.
import { el } from './dom.js';

const kw = {
  c: 'break case catch class const continue default defer do else enum export extends false finally for func function go if import interface let map new nil null package private public range return select static struct switch this throw true try type typeof var void while yield async await fn impl mut pub use match mod trait where self',
  py: 'and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self',
  sh: 'if then else elif fi for while do done case esac function in return export local echo exit set unset',
};
const families = {
  js: 'c', mjs: 'c', ts: 'c', tsx: 'c', jsx: 'c', go: 'c', c: 'c', h: 'c', cc: 'c', cpp: 'c', java: 'c', rs: 'c', cs: 'c', css: 'css', kt: 'c', swift: 'c',
  py: 'py', rb: 'py', sh: 'sh', bash: 'sh', zsh: 'sh', yaml: 'yaml', yml: 'yaml', toml: 'yaml', json: 'json', jsonl: 'json',
  md: 'md', markdown: 'md', html: 'html', htm: 'html', xml: 'html', svg: 'html',
};

export function languageOf(name) {
  const ext = String(name).toLowerCase().split('.').pop();
  return families[ext] || (/(^|\/)(Dockerfile|Makefile)$/.test(name) ? 'sh' : 'text');
}

// Each rule: [class, regexp] tried in order at the current position (sticky).
function rules(lang) {
  const str = ['str', /"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`(?:[^`\\]|\\.)*`?/y];
  const num = ['num', /\b(?:0x[\da-fA-F]+|\d+(?:\.\d+)?(?:e[+-]?\d+)?)\b/y];
  const word = (list) => ['kw', new RegExp(`\\b(?:${list.split(' ').join('|')})\\b`, 'y')];
  switch (lang) {
    case 'c': return [['com', /\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/y], str, num, word(kw.c)];
    case 'css': return [['com', /\/\*[\s\S]*?(?:\*\/|$)/y], str, num, ['kw', /[.#]?[a-zA-Z-]+(?=\s*[{:,])/y]];
    case 'py': return [['com', /#[^\n]*/y], ['str', /"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)/y], str, num, word(kw.py)];
    case 'sh': return [['com', /#[^\n]*/y], str, ['num', /\$\{?[\w@#?*!-]+\}?/y], word(kw.sh)];
    case 'yaml': return [['com', /#[^\n]*/y], ['kw', /^[ \t-]*[\w.-]+(?=\s*:)/my], str, num, ['num', /\b(?:true|false|null|yes|no)\b/y]];
    case 'json': return [['kw', /"(?:[^"\\\n]|\\.)*"(?=\s*:)/y], str, num, ['num', /\b(?:true|false|null)\b/y]];
    case 'md': return [['kw', /^#{1,6} [^\n]*/my], ['str', /`[^`\n]*`/y], ['num', /\*\*[^*\n]+\*\*/y], ['com', /^> [^\n]*/my]];
    case 'html': return [['com', /<!--[\s\S]*?(?:-->|$)/y], ['kw', /<\/?[\w:-]+|\/?>/y], str];
  }
  return [];
}

// highlight returns a <code> element holding text with its tokens in spans.
export function highlight(text, lang) {
  const code = el('code', { class: `lang-${lang}` });
  const rs = rules(lang);
  if (!rs.length) { code.textContent = text; return code; }
  let plain = '';
  let i = 0;
  const flush = () => { if (plain) { code.append(plain); plain = ''; } };
  outer: while (i < text.length) {
    for (const [cls, re] of rs) {
      re.lastIndex = i;
      const mm = re.exec(text);
      if (mm && mm[0].length) {
        flush();
        code.append(el('span', { class: `tok-${cls}`, text: mm[0] }));
        i += mm[0].length;
        continue outer;
      }
    }
    // Skip a whole identifier at once, so keywords match only at word starts.
    const w = /[\w$]+|[^\w$]/y;
    w.lastIndex = i;
    const chunk = w.exec(text)[0];
    plain += chunk;
    i += chunk.length;
  }
  flush();
  return code;
}
