// The setup page: a wizard that builds a team from the providers whose keys the server found
// (provider, model, how many agents, a system message each or generated personas, tools and
// a budget), shows the YAML, has the server validate it with --validate's validator, and saves
// it under the folder serve was given (--setup-dir) as a new team; and a config picker: the
// teams served, and the embedded examples to start from.
import { el, api, postJSON, ctrlEnter } from './dom.js';
import { highlight } from './highlight.js';

const q = (s) => JSON.stringify(String(s)); // a JSON string is a YAML string

export function showSetup(main) {
  let setup = null;
  let edited = false;
  const provider = el('select', { id: 'wiz-provider', name: 'provider' });
  const model = el('input', { id: 'wiz-model', name: 'model', placeholder: 'model' });
  const count = el('input', { id: 'wiz-count', name: 'count', type: 'number', min: 1, max: 8, value: 3 });
  const personas = el('input', { id: 'wiz-personas', type: 'checkbox' });
  const mode = el('select', { id: 'wiz-persona-mode' }, ['perspective', 'implementation', 'methodology'].map((v) => el('option', { value: v, text: v })));
  const tools = Object.fromEntries([['web', 'Web search'], ['code', 'Code execution'], ['workspace', 'A workspace with file tools'], ['commands', 'Commands in the workspace']]
    .map(([k, t]) => [k, { box: el('input', { type: 'checkbox', id: `wiz-tool-${k}` }), text: t }]));
  const budget = el('input', { id: 'wiz-budget', type: 'number', min: 0, step: '0.01', placeholder: 'no limit' });
  const agentsBox = el('div', { class: 'wiz-agents', id: 'wiz-agents' });
  const yaml = el('textarea', { id: 'wiz-yaml', rows: 18, spellcheck: 'false', class: 'code-input', 'aria-label': 'The config as YAML' });
  const preview = el('pre', { class: 'code', id: 'wiz-yaml-view', 'aria-hidden': 'true' });
  const report = el('div', { id: 'wiz-report', 'aria-live': 'polite' });
  // The rule of the server's team names (setup.go), said in full: the browser's own message
  // for a pattern ("Please match the requested format.") does not say what is allowed.
  const nameRule = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (no spaces)";
  const namePattern = '[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}';
  const name = el('input', { id: 'wiz-name', name: 'name', placeholder: 'my_team', pattern: namePattern, required: true,
    title: `A team name: ${nameRule}.`, 'aria-describedby': 'wiz-name-rule' });
  const nameHint = el('p', { class: 'muted small', id: 'wiz-name-rule', text: `A team name is ${nameRule}.` });
  const checkName = () => {
    const bad = name.value !== '' && !new RegExp(`^(?:${namePattern})$`).test(name.value);
    name.setCustomValidity(bad ? `Not a team name: use ${nameRule}.` : '');
    nameHint.className = bad ? 'error small' : 'muted small';
    nameHint.textContent = bad ? `"${name.value}" is not a team name: use ${nameRule}.` : `A team name is ${nameRule}.`;
  };
  name.addEventListener('input', checkName);
  name.addEventListener('invalid', checkName);
  const saveBtn = el('button', { type: 'submit', id: 'wiz-save', text: 'Save as a team' });
  const saved = el('div', { id: 'wiz-saved', 'aria-live': 'polite' });
  const examples = el('div', { class: 'picker', id: 'config-picker' });
  const teamList = el('ul', { class: 'team-list', id: 'team-list' });
  const drawTeams = async () => {
    try {
      const { teams } = await (await api('/api/teams')).json();
      teamList.replaceChildren(...teams.map((t) => el('li', {}, el('a', { href: `#/new?team=${encodeURIComponent(t.name)}`, text: t.name }),
        el('span', { class: 'muted small', text: ` ${t.agents.map((a) => a.model || a.backend).join(', ')}` }))));
    } catch (e) {
      teamList.replaceChildren(el('li', { class: 'error', text: `Cannot list the teams: ${e.message}` }));
    }
  };
  const keysNote = el('p', { class: 'muted', id: 'wiz-keys' });

  const agentRows = [];
  const drawAgents = () => {
    const n = Math.min(8, Math.max(1, +count.value || 1));
    while (agentRows.length < n) {
      const i = agentRows.length + 1;
      agentRows.push({
        system: el('textarea', { rows: 2, 'data-agent': i, placeholder: `Agent ${i}'s system message (optional)` }),
        answer: el('input', { 'data-agent': i, value: `Agent ${i}'s scripted answer.`, 'aria-label': `Agent ${i}'s scripted answer` }),
      });
    }
    const scripted = provider.value === 'scripted';
    agentsBox.replaceChildren(...agentRows.slice(0, n).map((r, k) => el('div', { class: 'wiz-agent' },
      el('label', { text: `Agent ${k + 1}` }), personas.checked ? el('p', { class: 'muted small', text: 'A generated persona.' }) : r.system,
      scripted ? r.answer : null)));
    for (const r of agentRows) { r.system.oninput = regen; r.answer.oninput = regen; }
  };

  const build = () => {
    const p = setup?.providers.find((x) => x.type === provider.value);
    const n = Math.min(8, Math.max(1, +count.value || 1));
    const lines = ['# Built with the massgen dashboard\'s setup wizard.', 'agents:'];
    for (let i = 1; i <= n; i++) {
      const r = agentRows[i - 1];
      lines.push(`  - id: ${provider.value}_${i}`);
      if (!personas.checked && r?.system.value.trim()) lines.push(`    system_message: ${q(r.system.value.trim())}`);
      lines.push('    backend:', `      type: ${provider.value}`);
      if (model.value.trim()) lines.push(`      model: ${q(model.value.trim())}`);
      if (provider.value === 'scripted') lines.push(`      answers: [${q(r?.answer.value.trim() || `Agent ${i}'s scripted answer.`)}]`);
      if (tools.web.box.checked && p?.web_search) lines.push('      enable_web_search: true');
      if (tools.code.box.checked && p?.code_execution) lines.push('      enable_code_execution: true');
      if (tools.workspace.box.checked || tools.commands.box.checked) lines.push(`      cwd: workspace${i}`);
      if (tools.commands.box.checked) lines.push('      enable_mcp_command_line: true');
    }
    const orch = [];
    if (+budget.value > 0) orch.push(`  max_cost_usd: ${+budget.value}`);
    if (personas.checked) orch.push('  coordination:', '    persona_generator:', '      enabled: true', `      diversity_mode: ${mode.value}`);
    if (orch.length) lines.push('orchestrator:', ...orch);
    return `${lines.join('\n')}\n`;
  };

  const show = () => preview.replaceChildren(highlight(yaml.value, 'yaml'));
  function regen() {
    if (edited) return;
    yaml.value = build();
    show();
  }
  const onProvider = () => {
    const p = setup?.providers.find((x) => x.type === provider.value);
    model.value = p?.default_model || '';
    tools.web.box.disabled = !p?.web_search;
    tools.code.box.disabled = !p?.code_execution;
    drawAgents();
    regen();
  };
  provider.addEventListener('change', () => { edited = false; onProvider(); });
  for (const f of [model, count, personas, mode, budget, ...Object.values(tools).map((t) => t.box)]) {
    f.addEventListener('input', () => { edited = false; drawAgents(); regen(); });
  }
  yaml.addEventListener('input', () => { edited = true; show(); });

  const validate = async () => {
    report.replaceChildren(el('p', { class: 'muted', text: 'Checking…' }));
    try {
      const { report: r } = await (await postJSON('/api/setup/validate', { name: name.value, yaml: yaml.value })).json();
      drawReport(report, r);
      return r.valid;
    } catch (e) {
      report.replaceChildren(el('p', { class: 'error', text: `Cannot validate: ${e.message}` }));
      return false;
    }
  };
  const form = el('form', { id: 'wiz-form', class: 'wizard' });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    saved.replaceChildren();
    saveBtn.disabled = true;
    try {
      const r = await fetch('/api/setup/save', { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: name.value, yaml: yaml.value }) });
      const body = await r.json();
      if (body.report) drawReport(report, body.report);
      if (!r.ok) throw new Error(body.error?.message || `${r.status}`);
      saved.replaceChildren(el('p', { class: 'ok' }, `Saved as ${body.file}; it is served now as team ${body.team}. `,
        el('a', { href: `#/new?team=${encodeURIComponent(body.team)}`, id: 'wiz-run', text: `Run ${body.team}` })));
      await drawTeams(); // the new team is served now: list it with the others
    } catch (err) {
      saved.replaceChildren(el('p', { class: 'error', text: `Not saved: ${err.message}` }));
    } finally {
      saveBtn.disabled = false;
    }
  });
  ctrlEnter(yaml, form);

  form.append(
    el('div', { class: 'wiz-grid' },
      el('div', { class: 'card wiz-steps' },
        el('h2', { text: '1 · Team' }), keysNote,
        el('label', { for: 'wiz-provider', text: 'Provider' }), provider,
        el('label', { for: 'wiz-model', text: 'Model' }), model,
        el('label', { for: 'wiz-count', text: 'Agents (1–8)' }), count,
        el('h2', { text: '2 · Instructions' }),
        el('label', { class: 'check' }, personas, ' Generate diverse personas instead ', mode),
        agentsBox,
        el('h2', { text: '3 · Tools and budget' }),
        ...Object.values(tools).map((t) => el('label', { class: 'check' }, t.box, ` ${t.text}`)),
        el('label', { for: 'wiz-budget', text: 'Budget in USD (orchestrator.max_cost_usd)' }), budget),
      el('div', { class: 'card wiz-yaml' },
        el('h2', { text: '4 · Review, validate and save' }),
        el('p', { class: 'muted small', text: 'Edit the YAML freely: the form stops rewriting it until you change the form again.' }),
        yaml, el('details', {}, el('summary', { text: 'Highlighted' }), preview),
        el('div', { class: 'row' }, el('button', { type: 'button', id: 'wiz-validate', class: 'secondary-ink', text: 'Validate', onclick: validate })),
        report,
        el('label', { for: 'wiz-name', text: 'Team name (its file is NAME.yaml in the setup folder)' }),
        el('div', { class: 'row' }, name, saveBtn), nameHint, saved)));

  main.replaceChildren(el('section', {}, el('h1', { text: 'Setup' }), form,
    el('section', { class: 'card' }, el('h2', { text: 'Configs' }), examples)));

  (async () => {
    try {
      setup = await (await api('/api/setup')).json();
      provider.replaceChildren(...setup.providers.map((p) => el('option', { value: p.type,
        text: `${p.type}${p.key_found ? ' · key found' : p.keyless ? ' · no key needed' : ` · no key (${(p.key_env || []).join(' or ')})`}` })));
      const found = setup.providers.filter((p) => p.key_found).map((p) => p.type);
      keysNote.textContent = found.length ? `Keys found for ${found.join(', ')}.` : 'No API key found: pick scripted for an offline team, or set a key (OPENAI_API_KEY, ANTHROPIC_API_KEY, …) and restart serve.';
      if (!setup.can_save) {
        saveBtn.disabled = true;
        saved.replaceChildren(el('p', { class: 'muted', text: 'This server saves no configs: start it with massgen serve --setup-dir DIR to save teams from here.' }));
      }
      drawPicker(examples, teamList, setup.examples, async (ex) => {
        const { yaml: text } = await (await api(`/api/examples/${encodeURIComponent(ex)}`)).json();
        yaml.value = text;
        edited = true;
        show();
        name.value = ex;
        checkName();
        yaml.focus();
      });
      await drawTeams();
      onProvider();
    } catch (e) {
      main.prepend(el('p', { class: 'error', text: `Cannot load the setup: ${e.message}` }));
    }
  })();
  return () => {};
}

function drawReport(box, r) {
  const issues = (list, kind) => list.map((is) => el('li', { class: kind },
    is.line ? el('code', { text: `${is.line}:${is.column} ` }) : null, is.message, is.suggestion ? el('span', { class: 'muted', text: ` (${is.suggestion})` }) : null));
  box.replaceChildren(el('p', { class: r.valid ? 'ok' : 'error', id: 'wiz-valid', text: r.valid ? `Valid${r.warning_count ? `, with ${r.warning_count} warnings` : ''}: --validate accepts it.` : `Invalid: ${r.error_count} errors.` }),
    el('ul', { class: 'issues' }, issues(r.errors || [], 'err'), issues(r.warnings || [], 'warn')));
}

function drawPicker(box, teamList, examples, load) {
  box.replaceChildren(
    el('h3', { text: 'Teams this server runs' }), teamList,
    el('h3', { text: 'Examples built in (start from one)' }),
    el('ul', { class: 'example-list' }, examples.map((x) => el('li', {},
      el('button', { type: 'button', class: 'link', 'data-example': x.name, text: x.name, onclick: () => load(x.name) }),
      el('span', { class: 'muted small', text: ` ${x.summary}${x.keys ? ` · keys: ${x.keys}` : ''}` })))));
}
