package pb

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wirebench/wirebench/api"
)

// The conversions below are the only place that knows both shapes; the
// protobuf codec and the gRPC server go through them.

// FromUser converts an api.User to its protobuf message. A zero CreatedAt
// becomes an absent timestamp so that it round-trips as zero. The message
// and its timestamp are one allocation (a gRPC Get, and each message of a
// user stream, makes one).
func FromUser(u *api.User) *User {
	if u.CreatedAt.IsZero() {
		return &User{Id: u.ID, Name: u.Name, Email: u.Email}
	}
	return new(UserBuf).Set(u)
}

// UserBuf is a User message and its timestamp in one block, to be filled
// again and again by a sender whose transport is done with a message when
// its send returns (grpcapi's user stream, where the server allows it): one
// allocation a stream instead of one a message.
type UserBuf struct {
	u  User
	ts timestamppb.Timestamp
}

// Set fills b's message with u (a zero CreatedAt: no timestamp) and
// returns it. The message is b's: the next Set overwrites it.
func (b *UserBuf) Set(u *api.User) *User {
	b.u.Id, b.u.Name, b.u.Email, b.u.CreatedAt = u.ID, u.Name, u.Email, nil
	if !u.CreatedAt.IsZero() {
		b.ts.Seconds, b.ts.Nanos = u.CreatedAt.Unix(), int32(u.CreatedAt.Nanosecond())
		b.u.CreatedAt = &b.ts
	}
	return &b.u
}

// ToUser converts a protobuf User to api.User (UTC, nanoseconds kept).
func ToUser(m *User, u *api.User) {
	*u = api.User{ID: m.GetId(), Name: m.GetName(), Email: m.GetEmail()}
	if m.CreatedAt != nil {
		u.CreatedAt = m.CreatedAt.AsTime()
	}
}

// FromUserList converts a list, allocating the messages in one block.
func FromUserList(l *api.UserList) *UserList {
	msgs := make([]User, len(l.Users))
	ts := make([]timestamppb.Timestamp, len(l.Users))
	out := &UserList{Users: make([]*User, len(l.Users))}
	for i := range l.Users {
		u := &l.Users[i]
		m := &msgs[i]
		m.Id, m.Name, m.Email = u.ID, u.Name, u.Email
		if !u.CreatedAt.IsZero() {
			ts[i].Seconds, ts[i].Nanos = u.CreatedAt.Unix(), int32(u.CreatedAt.Nanosecond())
			m.CreatedAt = &ts[i]
		}
		out.Users[i] = m
	}
	return out
}

// ToUserList converts a protobuf UserList to api.UserList.
func ToUserList(m *UserList, l *api.UserList) {
	l.Users = make([]api.User, len(m.GetUsers()))
	for i, u := range m.GetUsers() {
		ToUser(u, &l.Users[i])
	}
}

// FromTodo converts an api.Todo to its protobuf message.
func FromTodo(t *api.Todo) *Todo { return &Todo{Id: t.ID, Text: t.Text, Done: t.Done} }

// ToTodo converts a protobuf Todo to api.Todo.
func ToTodo(m *Todo, t *api.Todo) {
	*t = api.Todo{ID: m.GetId(), Text: m.GetText(), Done: m.GetDone()}
}

// FromTodoList converts a list, allocating the messages in one block.
func FromTodoList(l *api.TodoList) *TodoList {
	msgs := make([]Todo, len(l.Todos))
	out := &TodoList{Todos: make([]*Todo, len(l.Todos))}
	for i := range l.Todos {
		t := &l.Todos[i]
		msgs[i].Id, msgs[i].Text, msgs[i].Done = t.ID, t.Text, t.Done
		out.Todos[i] = &msgs[i]
	}
	return out
}

// ToTodoList converts a protobuf TodoList to api.TodoList.
func ToTodoList(m *TodoList, l *api.TodoList) {
	l.Todos = make([]api.Todo, len(m.GetTodos()))
	for i, t := range m.GetTodos() {
		ToTodo(t, &l.Todos[i])
	}
}
