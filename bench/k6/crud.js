// The TOON seed's k6 iteration against wirebench's REST API, with every
// response checked: GET all, POST, GET one, PUT, DELETE of the created user.
// The dataset stays the same size, so iterations stay comparable.
//
//   k6 run -e BASE=http://127.0.0.1:8080 -e VUS=10 -e ITERATIONS=1000 bench/k6/crud.js
import http from 'k6/http';
import { check } from 'k6';

const BASE = __ENV.BASE || 'http://127.0.0.1:8080';
const SEEDED = parseInt(__ENV.SEED_USERS || '100');

export const options = {
  vus: parseInt(__ENV.VUS || '10'),
  iterations: parseInt(__ENV.ITERATIONS || '500'),
  thresholds: { checks: ['rate==1.0'] },
};

const json = { headers: { 'Content-Type': 'application/json', Accept: 'application/json' } };

export default function () {
  const all = http.get(`${BASE}/users`, json);
  check(all, {
    'list 200': (r) => r.status === 200,
    'list has the seeded users': (r) => r.json('users').length >= SEEDED,
  });

  const name = `k6 user ${__VU}-${__ITER}`;
  const created = http.post(`${BASE}/users`, JSON.stringify({ name, email: `vu${__VU}@example.com` }), json);
  check(created, {
    'create 201': (r) => r.status === 201,
    'create assigns id and created_at': (r) => r.json('id') > SEEDED && /\.\d+Z$/.test(r.json('created_at')),
  });
  if (created.status !== 201) return;
  const id = created.json('id');

  const one = http.get(`${BASE}/users/${id}`, json);
  check(one, { 'get 200': (r) => r.status === 200, 'get returns it': (r) => r.json('name') === name });

  const upd = http.put(`${BASE}/users/${id}`, JSON.stringify({ name: name + ' v2', email: 'v2@example.com' }), json);
  check(upd, {
    'put 200': (r) => r.status === 200,
    'put keeps created_at': (r) => r.json('created_at') === created.json('created_at'),
    'put changes name': (r) => r.json('name') === name + ' v2',
  });

  const del = http.del(`${BASE}/users/${id}`, null, json);
  check(del, { 'delete 204': (r) => r.status === 204 });
}
