// Package api holds the reference API's domain types, their validation and
// the sentinel errors every transport maps to its own wire form.
//
// The same structs are encoded by every codec (JSON, TOON, msgpack, CBOR use
// the struct tags; protobuf converts through package pb), so a value created
// in one format reads back equal in any other, timestamps to the nanosecond.
package api

import "time"

// User is the TOON seed's resource. The server assigns ID and CreatedAt.
type User struct {
	ID        int64     `json:"id" msgpack:"id"`
	Name      string    `json:"name" msgpack:"name"`
	Email     string    `json:"email" msgpack:"email"`
	CreatedAt time.Time `json:"created_at" msgpack:"created_at"`
}

// UserList is the body of GET /users: an object with one array field, so
// that TOON renders it as users[N]{id,name,email,created_at}: and protobuf
// as a list message.
type UserList struct {
	Users []User `json:"users" msgpack:"users"`
}

// Todo is the gRPC seed's resource. The server assigns ID (a UUID).
type Todo struct {
	ID   string `json:"id" msgpack:"id"`
	Text string `json:"text" msgpack:"text"`
	Done bool   `json:"done" msgpack:"done"`
}

// TodoList is the body of GET /todos.
type TodoList struct {
	Todos []Todo `json:"todos" msgpack:"todos"`
}

// EchoRequest is the Fiber seed's request body.
type EchoRequest struct {
	FirstMessage  string `json:"first_message" msgpack:"first_message"`
	SecondMessage string `json:"second_message" msgpack:"second_message"`
}

// EchoResponse is the reply to EchoRequest: Message = FirstMessage + SecondMessage.
type EchoResponse struct {
	Message string `json:"message" msgpack:"message"`
}

// Echo computes the echo reply.
func Echo(req EchoRequest) EchoResponse {
	return EchoResponse{Message: req.FirstMessage + req.SecondMessage}
}

// Error is the body of every failed REST request, in the negotiated format.
// Code is a stable machine-readable name (see Code), Error a human message.
type Error struct {
	Error string `json:"error" msgpack:"error"`
	Code  string `json:"code" msgpack:"code"`
}
