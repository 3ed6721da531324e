// The MCP TypeScript SDK's OAuth client given the endpoint's URL alone, as a host adds a
// remote server: its StreamableHTTPClientTransport gets the 401, and auth() discovers
// the RFC 9728 and RFC 8414 metadata, registers (RFC 7591) and asks to send the user to
// the authorization URL (PKCE S256, RFC 8707 resource). This script is the host; the
// test is its user's browser: the URL goes out on stdout, the answer comes back on
// stdin. Then finishAuth(code), tools/list, one transition, and a refresh through the
// SDK's own auth() (what the transport does when a token is refused).
//
//   node mcp_oauth_flow.mjs MCP_URL ORDER_ID
//     stdout: {"authorize": URL}           stdin: {"code": …, "state": …, "iss": …}
//     stdout: {"done": {…what happened}}   (one JSON object a line)
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [mcpUrl, orderId] = process.argv.slice(2);
const REDIRECT_URI = 'http://127.0.0.1:9/callback'; // answered by the test's browser
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

const requests = [];
const recording = (url, init) => {
  requests.push(`${init?.method ?? 'GET'} ${new URL(url).pathname}`);
  return fetch(url, init);
};

// What a host keeps between runs (here, in memory): the OAuthClientProvider contract.
class MemoryProvider {
  constructor() {
    this.expectedState = randomBytes(16).toString('hex');
  }
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: 'affordances TS SDK test',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return this.expectedState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url.href;
    say({ authorize: url.href });
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const provider = new MemoryProvider();
const connect = async () => {
  const client = new Client({ name: 'affordances-ts-oauth', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    authProvider: provider,
    fetch: recording,
  });
  await client.connect(transport);
  return { client, transport };
};

let first;
try {
  await connect();
  throw new Error('the server let an unauthenticated client in');
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  // The user went through the browser; the redirect's query comes back.
  const { value } = await lines.next();
  const answer = JSON.parse(value);
  if (answer.state !== provider.expectedState) throw new Error('state mismatch');
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    authProvider: provider,
    fetch: recording,
  });
  await transport.finishAuth(answer.code);
  first = provider.tokens();
}

const { client } = await connect();
const tools = (await client.listTools()).tools.map((tool) => tool.name);
const confirmed = await client.callTool({
  name: 'confirm_order',
  arguments: { orderId: Number(orderId), expectedVersion: 1 },
});
await client.close();

// A refresh, as the transport runs one on a 401: the same auth() with the stored tokens.
const refreshed = await auth(provider, { serverUrl: new URL(mcpUrl), fetchFn: recording });
const second = provider.tokens();
const again = await connect();
const toolsAfterRefresh = (await again.client.listTools()).tools.length;
await again.client.close();

say({
  done: {
    requests,
    authorize: provider.authorizationUrl,
    clientId: provider.client.client_id,
    tools,
    confirmed: confirmed.structuredContent,
    isError: confirmed.isError ?? false,
    first: { access: first.access_token, refresh: first.refresh_token, scope: first.scope },
    refreshed,
    second: { access: second.access_token, refresh: second.refresh_token, scope: second.scope },
    toolsAfterRefresh,
  },
});
process.exit(0);
