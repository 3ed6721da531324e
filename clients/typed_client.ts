// A client written against the types openapi-typescript generates from the demo's
// OpenAPI document (demo_tests/clients/test_typed_clients.py generates ./openapi.d.ts
// beside a copy of this file, compiles it with `tsc --strict` and runs it with node).
// It compiles only if the document states what the server sends and takes: an order's
// `affordances` and `unavailableAffordances`, a transition's body with `expectedVersion`
// though it has no other input, its `If-Match` and `Idempotency-Key` headers, the
// `Idempotent-Replayed` header, and a stale version's problem with the order as `current`.
//
// Usage: node typed_client.js BASE_URL BEARER_TOKEN ORDER_ID
// Prints one JSON line of what it saw.

import type { components, paths } from "./openapi";

type Order = components["schemas"]["Order"];
type Entry = NonNullable<Order["affordances"]>[number];
type Unavailable = NonNullable<Order["unavailableAffordances"]>[number];
type OrderProblem = components["schemas"]["OrderProblem"];
type Confirm = paths["/api/orders/{id}/confirm/"]["post"];
type ConfirmBody = NonNullable<Confirm["requestBody"]>["content"]["application/json"];
type ConfirmHeaders = NonNullable<Confirm["parameters"]["header"]>;
type Retrieve = paths["/api/orders/{id}/"]["get"];
type Shape = NonNullable<NonNullable<Retrieve["parameters"]["query"]>["affordances"]>;

const [base, token, orderId] = process.argv.slice(2);
const auth = { Authorization: `Bearer ${token}`, Accept: "application/json" };

async function read(shape?: Shape): Promise<Order> {
  const query = shape === undefined ? "" : `?affordances=${shape}`;
  const answer = await fetch(`${base}/api/orders/${orderId}/${query}`, { headers: auth });
  if (answer.status !== 200) throw new Error(`GET: ${answer.status}`);
  return (await answer.json()) as Order;
}

async function confirm(target: string, body: ConfirmBody, headers: ConfirmHeaders) {
  return fetch(target, {
    method: "POST",
    headers: { ...auth, ...headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

// A full entry names its catalog entry by URN, a compact one by name only.
function describe(entry: Entry): string {
  return "operation" in entry ? `${entry.name} (${entry.operation})` : entry.name;
}

async function main(): Promise<void> {
  const order = await read();
  const entries: Entry[] = order.affordances ?? [];
  const unavailable: Unavailable[] = order.unavailableAffordances ?? [];
  const affordance = entries.find((entry) => entry.name === "confirm_order");
  if (affordance === undefined || affordance.validForVersion === undefined) {
    throw new Error("confirm_order does not apply");
  }
  const version = affordance.validForVersion;
  const key = `typed-client-${orderId}-${version}`;
  const headers: ConfirmHeaders = { "If-Match": `"${version}"`, "Idempotency-Key": key };
  const body: ConfirmBody = { expectedVersion: version };

  const first = await confirm(affordance.target, body, headers);
  const confirmed = (await first.json()) as Order;
  const again = await confirm(affordance.target, body, headers);
  const stale = await confirm(affordance.target, body, { "If-Match": `"${version}"` });
  const problem = (await stale.json()) as OrderProblem;
  const compact = await read("compact");

  console.log(
    JSON.stringify({
      available: entries.map(describe),
      unavailable: unavailable.map((entry) => [entry.name, entry.reason]),
      version,
      confirmed: [first.status, confirmed.status, confirmed.version, first.headers.get("ETag")],
      replayed: [again.status, again.headers.get("Idempotent-Replayed")],
      stale: [stale.status, problem.code, problem.current?.version ?? null],
      compact: (compact.affordances ?? []).map(describe),
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
