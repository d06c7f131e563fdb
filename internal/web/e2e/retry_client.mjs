// End-to-end check that the official `openai` npm client, with its default retries, does not
// run a failing team more than once.
//   NODE_PATH=.ci/npm/node_modules node internal/web/e2e/retry_client.mjs http://127.0.0.1:PORT
// It asks each failing team once, with the client's defaults (maxRetries 2), expects the
// typed error, and prints the statuses as one JSON line; the Go test counts the sessions.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const require = createRequire(import.meta.url); // resolves through NODE_PATH
const { OpenAI } = require('openai');

const [base] = process.argv.slice(2);
assert.ok(base, 'usage: retry_client.mjs BASE_URL');
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'no-token', timeout: 60_000 });
assert.equal(client.maxRetries, 2, 'the test relies on the default retries');
const messages = [{ role: 'user', content: 'What is the capital of France?' }];

const statuses = {};
for (const model of ['fail', 'slowfail']) {
  await assert.rejects(client.chat.completions.create({ model, messages }), (e) => {
    assert.ok(e instanceof OpenAI.APIError, `${model}: ${e}`);
    statuses[model] = e.status;
    return true;
  });
}
console.log(JSON.stringify(statuses));
