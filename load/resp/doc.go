// Package resp reads and writes RESP2, the Redis protocol, for the load
// engine's KV client (load's kvScenario over --protocol resp): Parse
// reads one reply with explicit limits (maxRESPLine, maxRESPBulk,
// maxRESPElems, maxRESPDepth; FuzzParseRESP), AppendCommand encodes a
// command as an array of bulk strings without allocating.
package resp
