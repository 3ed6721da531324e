// Ketting (HAL-FORMS hypermedia client) against the demo, with its default Accept header:
// root -> orders -> the first order offering cancel_order -> submit it -> the new state;
// then the same form again, now stale: the server must answer 412.
//
//   node ketting_flow.mjs BASE_URL BEARER_TOKEN  ->  one JSON object on stdout
import ketting from 'ketting';

const { Client, bearerAuth } = ketting;
const [base, token] = process.argv.slice(2);
const client = new Client(base);
client.use(bearerAuth(token));
const accepts = [];
client.use((request, next) => {
  accepts.push(request.headers.get('Accept'));
  return next(request);
});

const orders = await client.go('/api/').follow('orders');
const listing = await orders.get();
let chosen = null;
for (const order of listing.followAll('orders')) {
  const state = await order.get();
  if (state.hasAction('cancel_order')) {
    chosen = { order, state };
    break;
  }
}
if (chosen === null) throw new Error('no order offers cancel_order');

const { order, state } = chosen;
const form = state.action('cancel_order');
const submitted = await form.submit({ reason: 'customer_request' });
const fresh = await order.refresh();
let resubmitted;
try {
  await form.submit({ reason: 'customer_request' });
  resubmitted = 'accepted';
} catch (error) {
  resubmitted = error.status ?? String(error);
}
console.log(JSON.stringify({
  accept: accepts[0],
  listingType: listing.contentHeaders().get('Content-Type'),
  orderUrl: order.uri,
  actions: state.actions().map((action) => action.name),
  fields: form.fields.map((field) => [field.name, field.type, field.value ?? null]),
  submittedStatus: submitted.data.status,
  freshStatus: fresh.data.status,
  resubmitted,
}));
