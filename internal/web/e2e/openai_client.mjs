// End-to-end check of the chat API with the official `openai` npm client.
//   NODE_PATH=.ci/npm/node_modules MASSGEN_TOKEN=... node internal/web/e2e/openai_client.mjs http://127.0.0.1:PORT
// It lists the models, asks the demo team once without streaming and once streaming (with
// usage), checks both answers and their usage, checks the errors a client sees, and prints the
// non-streaming result as one JSON line for the Go test to compare with the log directory.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const require = createRequire(import.meta.url); // resolves through NODE_PATH
const { OpenAI } = require('openai');

const [base] = process.argv.slice(2);
assert.ok(base, 'usage: openai_client.mjs BASE_URL');
const token = process.env.MASSGEN_TOKEN || 'no-token';
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: token, maxRetries: 0, timeout: 120_000 });
const messages = [
  { role: 'system', content: 'Ignored: each agent keeps its own system message.' },
  { role: 'user', content: 'What is the capital of France?' },
];

const models = [];
for await (const m of client.models.list()) models.push(m.id);
assert.ok(models.includes('demo'), `models ${models}`);

const done = await client.chat.completions.create({ model: 'demo', messages });
assert.match(done.id, /^chatcmpl-/);
assert.equal(done.object, 'chat.completion');
assert.equal(done.model, 'demo');
assert.equal(done.choices[0].finish_reason, 'stop');
assert.equal(done.choices[0].message.role, 'assistant');
const answer = done.choices[0].message.content;
assert.ok(answer && answer.trim().length > 0, 'empty answer');
assert.ok(done.usage.prompt_tokens > 0 && done.usage.completion_tokens > 0, JSON.stringify(done.usage));
assert.equal(done.usage.total_tokens, done.usage.prompt_tokens + done.usage.completion_tokens);

const stream = await client.chat.completions.create({
  model: 'demo', messages, stream: true, stream_options: { include_usage: true },
});
let streamed = '';
let deltas = 0;
let finish = null;
let usage = null;
let id = null;
for await (const chunk of stream) {
  assert.equal(chunk.object, 'chat.completion.chunk');
  id ??= chunk.id;
  assert.equal(chunk.id, id);
  const choice = chunk.choices[0];
  if (choice?.delta?.content) { streamed += choice.delta.content; deltas++; }
  if (choice?.finish_reason) finish = choice.finish_reason;
  if (chunk.usage) usage = chunk.usage;
}
assert.equal(finish, 'stop');
assert.ok(deltas > 1, `the answer came in ${deltas} delta(s)`);
assert.equal(streamed, answer, 'the streamed answer differs from the non-streamed one');
assert.ok(usage && usage.total_tokens > 0, `stream usage ${JSON.stringify(usage)}`);

// Errors come back as the client's typed errors.
await assert.rejects(client.chat.completions.create({ model: 'no-such-team', messages }),
  (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found');
await assert.rejects(client.chat.completions.create({ model: 'demo', messages: [{ role: 'system', content: 'only' }] }),
  (e) => e instanceof OpenAI.BadRequestError);
if (process.env.MASSGEN_TOKEN) {
  const wrong = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(wrong.models.list(), (e) => e instanceof OpenAI.AuthenticationError);
}

console.log(JSON.stringify({ answer, usage: done.usage, stream_usage: usage, deltas, massgen: done.massgen }));
