module github.com/wirebench/wirebench/bench/browserwire

go 1.26.7

replace github.com/wirebench/wirebench => ../..

require (
	github.com/coder/websocket v1.8.15
	github.com/gorilla/websocket v1.5.4-0.20250319132907-e064f32e3674
	github.com/improbable-eng/grpc-web v0.15.0
	github.com/wirebench/wirebench v0.0.0-00010101000000-000000000000
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	connectrpc.com/connect v1.21.1 // indirect
	github.com/cenkalti/backoff/v4 v4.1.1 // indirect
	github.com/desertbit/timer v0.0.0-20180107155436-c41aec40b27f // indirect
	github.com/fxamacker/cbor/v2 v2.9.6 // indirect
	github.com/goccy/go-json v0.12.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/rs/cors v1.7.0 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261019180522-ce908d29299b // indirect
	nhooyr.io/websocket v1.8.6 // indirect
)
