package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/api"
)

// userID reads the id in the path. Only the canonical decimal spelling
// names a user: "+1" and "01" parse as 1 but are other URLs, and letting
// them resolve meant DELETE /users/+2 deleted user 2 (issue 10 item 5).
func userID(q *request) (int64, error) {
	s := q.id
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || !canonicalInt(s) {
		return 0, fmt.Errorf("user %q: %w", s, api.ErrNotFound)
	}
	return id, nil
}

// canonicalInt reports whether s, which strconv.ParseInt accepted, is
// strconv.FormatInt's spelling of its value: no sign but a minus, no
// leading zero, "0" alone. It compares without formatting, which would
// allocate a string for every id past 99.
func canonicalInt(s string) bool {
	if s == "0" {
		return true
	}
	s = strings.TrimPrefix(s, "-")
	return s != "" && '1' <= s[0] && s[0] <= '9'
}

func (s *Server) listUsers(q *request) (int, any, error) {
	q.users.Users = s.store.ListUsers()
	return http.StatusOK, &q.users, nil
}

func (s *Server) createUser(q *request) (int, any, error) {
	if err := q.decode(&q.user); err != nil {
		return 0, nil, err
	}
	u, err := s.store.CreateUser(q.user)
	if err != nil {
		return 0, nil, err
	}
	q.user = u
	return http.StatusCreated, &q.user, nil
}

func (s *Server) getUser(q *request) (int, any, error) {
	id, err := userID(q)
	if err != nil {
		return 0, nil, err
	}
	if q.user, err = s.store.GetUser(id); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, &q.user, nil
}

func (s *Server) updateUser(q *request) (int, any, error) {
	id, err := userID(q)
	if err != nil {
		return 0, nil, err
	}
	if err := q.decode(&q.user); err != nil {
		return 0, nil, err
	}
	if q.user, err = s.store.UpdateUser(id, q.user); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, &q.user, nil
}

func (s *Server) deleteUser(q *request) (int, any, error) {
	id, err := userID(q)
	if err != nil {
		return 0, nil, err
	}
	if err := s.store.DeleteUser(id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) listTodos(q *request) (int, any, error) {
	q.todos.Todos = s.store.ListTodos()
	return http.StatusOK, &q.todos, nil
}

func (s *Server) createTodo(q *request) (int, any, error) {
	if err := q.decode(&q.todo); err != nil {
		return 0, nil, err
	}
	t, err := s.store.CreateTodo(q.todo)
	if err != nil {
		return 0, nil, err
	}
	q.todo = t
	return http.StatusCreated, &q.todo, nil
}

func (s *Server) getTodo(q *request) (int, any, error) {
	t, err := s.store.GetTodo(q.id)
	if err != nil {
		return 0, nil, err
	}
	q.todo = t
	return http.StatusOK, &q.todo, nil
}

func (s *Server) updateTodo(q *request) (int, any, error) {
	if err := q.decode(&q.todo); err != nil {
		return 0, nil, err
	}
	t, err := s.store.UpdateTodo(q.id, q.todo)
	if err != nil {
		return 0, nil, err
	}
	q.todo = t
	return http.StatusOK, &q.todo, nil
}

func (s *Server) deleteTodo(q *request) (int, any, error) {
	if err := s.store.DeleteTodo(q.id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) echo(q *request) (int, any, error) {
	// In q's fields, not locals: those would escape through decode's
	// and the reply's `any`, two allocations per echo (request).
	if err := q.decode(&q.echoIn); err != nil {
		return 0, nil, err
	}
	if err := q.echoIn.Validate(); err != nil {
		return 0, nil, err
	}
	q.echoOut = api.Echo(q.echoIn)
	return http.StatusOK, &q.echoOut, nil
}
