// Differential-test helper for toon/reference_test.go: reads one JSON
// request per line on stdin and writes one JSON reply per line on stdout,
// so a single node process serves the whole batch.
//
// request: {"value": <JSON value>, "toon": "<TOON from the Go encoder>",
//           "options": {"delimiter": ",", "indentSize": 2}}
// reply:   {"encoded": "<reference TOON>" | null, "encodeError": "...",
//           "decoded": <reference decode of "toon"> | null, "decodeError": "..."}
import { createInterface } from 'node:readline'
import { encode, decode } from '@toon-format/toon'

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity })
const out = []
for await (const line of rl) {
  if (!line) continue
  const req = JSON.parse(line)
  const reply = { encoded: null, decoded: null }
  try {
    reply.encoded = encode(req.value, req.options)
  } catch (e) {
    reply.encodeError = String(e && e.message)
  }
  try {
    reply.decoded = decode(req.toon, { indentSize: req.options.indentSize })
  } catch (e) {
    reply.decodeError = String(e && e.message)
  }
  out.push(JSON.stringify(reply))
}
process.stdout.write(out.join('\n') + '\n')
