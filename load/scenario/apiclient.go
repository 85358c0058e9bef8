package scenario

import (
	"context"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/load"
)

// apiClient is one VU's connection to the reference API over one
// transport. Each method performs one request, fills o's status and
// payload bytes, sets o.Fail on a transport error, an unexpected status
// or an undecodable body, and reports success. Checking what the body
// says is the scenario's job. Not safe for concurrent use.
type apiClient interface {
	listUsers(ctx context.Context, out *api.UserList, o *load.Outcome) bool
	createUser(ctx context.Context, in *encoded[api.User], out *api.User, o *load.Outcome) bool
	getUser(ctx context.Context, id int64, out *api.User, o *load.Outcome) bool
	updateUser(ctx context.Context, id int64, in *encoded[api.User], out *api.User, o *load.Outcome) bool
	deleteUser(ctx context.Context, id int64, o *load.Outcome) bool
	echo(ctx context.Context, in *encoded[api.EchoRequest], out *api.EchoResponse, o *load.Outcome) bool
	close()
}

// encoded is a request value with its body pre-encoded in the run's
// format, so the client spends its CPU on the exchange, not on encoding.
type encoded[T any] struct {
	v    T
	body []byte
}
