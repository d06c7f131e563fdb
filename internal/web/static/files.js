// The workspace browser: the files of the session's folder (each answer's and vote's record,
// snapshots/<answer label>/ with the workspace as it was at each answer, final/ with the
// winner's workspace) as a tree; a file opens highlighted, as a preview
// (Markdown, images, HTML in a sandboxed frame, PDF), or as a diff against the same file in
// another snapshot; every file downloads. Files come from the server, which confines them to
// the session folder and caps their size.
import { el, api, plural } from './dom.js';
import { highlight, languageOf } from './highlight.js';
import { renderMarkdown } from './md.js';
import { diffView } from './diff.js';

const images = /\.(png|jpe?g|gif|webp|svg)$/i;
const frames = /\.(html?|pdf)$/i;

export class FilesView {
  constructor(id) {
    this.id = id;
    this.entries = null;
    this.root = el('div', { class: 'files', id: 'files' });
    this.tree = el('div', { class: 'tree', role: 'tree', 'aria-label': 'Session files' });
    this.view = el('div', { class: 'file-view', id: 'file-view' }, el('p', { class: 'muted', text: 'Pick a file.' }));
    this.root.append(this.tree, this.view);
  }

  url(path, extra = '') { return `/api/sessions/${this.id}/file?path=${encodeURIComponent(path)}${extra}`; }

  async load(force) {
    if (this.entries && !force) return;
    try {
      const { entries, truncated } = await (await api(`/api/sessions/${this.id}/files`)).json();
      this.entries = entries;
      this.drawTree(truncated);
    } catch (e) {
      this.tree.replaceChildren(el('p', { class: 'error', text: `Cannot list the files: ${e.message}` }));
    }
  }

  files() { return (this.entries || []).filter((e) => !e.dir); }

  drawTree(truncated) {
    // A folder with no file anywhere below it (the snapshot of an answer given with an empty
    // workspace) has nothing to open: it is left out, and the count says so.
    const full = new Set();
    for (const e of this.files()) {
      for (let i = e.path.indexOf('/'); i > 0; i = e.path.indexOf('/', i + 1)) full.add(e.path.slice(0, i));
    }
    const empty = this.entries.filter((e) => e.dir && !full.has(e.path)).length;
    const dirs = new Map([['', el('ul', { role: 'group' })]]);
    for (const e of this.entries) {
      const parent = e.path.includes('/') ? e.path.slice(0, e.path.lastIndexOf('/')) : '';
      const name = e.path.slice(parent.length ? parent.length + 1 : 0);
      const ul = dirs.get(parent);
      if (!ul || (e.dir && !full.has(e.path))) continue;
      if (e.dir) {
        const sub = el('ul', { role: 'group' });
        dirs.set(e.path, sub);
        ul.append(el('li', { role: 'treeitem' }, el('details', { open: /^(final|snapshots)(\/|$)/.test(e.path) }, el('summary', { text: `${name}/` }), sub)));
      } else {
        ul.append(el('li', { role: 'treeitem' }, el('button', {
          type: 'button', class: 'file', 'data-path': e.path, disabled: e.link, title: e.link ? 'a symbolic link: not opened' : e.path,
          onclick: () => this.open(e.path),
        }, name, el('span', { class: 'muted small', text: ` ${size(e.size)}` }))));
      }
    }
    const n = this.files().length;
    const notes = [empty ? `${plural(empty, 'empty folder')} not shown` : '', truncated ? 'the listing was cut off' : ''].filter(Boolean);
    this.tree.replaceChildren(el('p', { class: 'muted small', id: 'files-count', text: `${plural(n, 'file')}${notes.length ? ` (${notes.join('; ')})` : ''}` }), dirs.get(''));
  }

  async open(path) {
    this.tree.querySelectorAll('button.file').forEach((b) => b.classList.toggle('active', b.dataset.path === path));
    const name = path.split('/').pop();
    const same = this.files().filter((e) => e.path !== path && e.path.split('/').pop() === name);
    const head = el('div', { class: 'file-head' },
      el('code', { class: 'file-path', text: path }),
      el('a', { class: 'button small', href: this.url(path, '&download=1'), download: name, text: 'Download' }));
    const pane = el('div', { class: 'file-body' }, el('p', { class: 'muted', text: 'Loading…' }));
    if (same.length) {
      const pick = el('select', { 'aria-label': 'Compare with', class: 'compare' },
        el('option', { value: '', text: 'Compare with…' }), same.map((e) => el('option', { value: e.path, text: e.path })));
      pick.addEventListener('change', async () => {
        if (!pick.value) { this.open(path); return; }
        const [a, b] = await Promise.all([this.text(pick.value), this.text(path)]);
        pane.replaceChildren(diffView(a.text, b.text, [pick.value, path]));
      });
      head.append(pick);
    }
    this.view.replaceChildren(head, pane);
    pane.replaceChildren(await this.preview(path));
  }

  async text(path) {
    const r = await api(this.url(path));
    return { text: await r.text(), cut: r.headers.get('X-Truncated') };
  }

  // preview draws a file as what it is: an image, a sandboxed frame, Markdown, or code.
  async preview(path) {
    try {
      if (images.test(path)) return el('img', { class: 'preview-img', src: this.url(path, '&as=preview'), alt: path });
      if (frames.test(path)) {
        return el('iframe', { class: 'preview-frame', src: this.url(path, '&as=preview'), title: path,
          sandbox: /\.pdf$/i.test(path) ? null : '', referrerpolicy: 'no-referrer' });
      }
      const { text, cut } = await this.text(path);
      const note = cut ? el('p', { class: 'muted small', text: `Showing the first 2 MiB of ${size(+cut)}: download it for the rest.` }) : null;
      if (/\.(md|markdown)$/i.test(path) || /(^|\/)answer\.txt$/.test(path)) {
        const md = el('div', { class: 'markdown' });
        md.innerHTML = renderMarkdown(text);
        const raw = el('pre', { class: 'code' }, highlight(text, 'md'));
        raw.hidden = true;
        const toggle = el('button', { type: 'button', class: 'link', text: 'Show source', onclick: () => {
          raw.hidden = !raw.hidden; md.hidden = !raw.hidden; toggle.textContent = raw.hidden ? 'Show source' : 'Show rendered';
        } });
        return el('div', {}, note, toggle, md, raw);
      }
      return el('div', {}, note, el('pre', { class: 'code numbered' }, highlight(text, languageOf(path))));
    } catch (e) {
      return el('p', { class: 'error', text: `Cannot open ${path}: ${e.message}` });
    }
  }
}

// artifactsView lists what the winner produced (final/<winner>/workspace and its answer) and
// previews the first one.
export function artifactsView(files, winner) {
  const prefix = `final/${winner}/`;
  const mine = files.files().filter((e) => e.path.startsWith(`${prefix}workspace/`));
  if (!mine.length) return null;
  const box = el('div', { class: 'artifact-body' });
  const list = el('div', { class: 'artifact-list' }, mine.slice(0, 40).map((e, i) => el('button', {
    type: 'button', class: `chip${i === 0 ? ' active' : ''}`, 'data-path': e.path, text: e.path.slice(prefix.length + 'workspace/'.length),
    onclick: async (ev) => {
      list.querySelectorAll('.chip').forEach((c) => c.classList.toggle('active', c === ev.currentTarget));
      box.replaceChildren(await files.preview(e.path));
    },
  })));
  files.preview(mine[0].path).then((p) => box.replaceChildren(p));
  return el('section', { class: 'artifacts', id: 'artifacts' }, el('h3', { text: `What ${winner} produced` }), list, box);
}

// memoryFilesView lists the filesystem memory the winner's workspace kept
// (final/<winner>/workspace/memory/short_term and long_term, the memfiles tools' files), each
// tier's files as chips that preview the file; null when there is none.
export function memoryFilesView(files, winner) {
  const prefix = `final/${winner}/workspace/memory/`;
  const tiers = ['short_term', 'long_term'].map((tier) => [tier, files.files().filter((e) => e.path.startsWith(`${prefix}${tier}/`))]).filter(([, fs]) => fs.length);
  if (!tiers.length) return null;
  const box = el('div', { class: 'artifact-body' });
  const chips = tiers.map(([tier, fs]) => el('div', { class: 'artifact-list', 'data-tier': tier }, el('span', { class: 'muted small', text: `${tier}: ` }),
    fs.slice(0, 40).map((e) => el('button', {
      type: 'button', class: 'chip', 'data-path': e.path, text: e.path.slice(prefix.length + tier.length + 1),
      onclick: async () => box.replaceChildren(await files.preview(e.path)),
    }))));
  return el('section', { class: 'artifacts', id: 'memory-files' }, el('h3', { text: 'Memory files the team kept' }), ...chips, box);
}

function size(n) {
  if (n == null) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1 << 20)).toFixed(1)} MiB`;
}
