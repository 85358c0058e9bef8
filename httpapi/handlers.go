package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/wirebench/wirebench/api"
)

// userID reads the id in the path. Only the canonical decimal spelling
// names a user: "+1" and "01" parse as 1 but are other URLs, and letting
// them resolve meant DELETE /users/+2 deleted user 2 (issue 10 item 5).
func userID(q *request) (int64, error) {
	s := q.id
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(id, 10) != s {
		return 0, fmt.Errorf("user %q: %w", s, api.ErrNotFound)
	}
	return id, nil
}

func (s *Server) listUsers(q *request) (int, any, error) {
	return http.StatusOK, &api.UserList{Users: s.store.ListUsers()}, nil
}

func (s *Server) createUser(q *request) (int, any, error) {
	var u api.User
	if err := q.decode(&u); err != nil {
		return 0, nil, err
	}
	u, err := s.store.CreateUser(u)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, &u, nil
}

func (s *Server) getUser(q *request) (int, any, error) {
	id, err := userID(q)
	if err != nil {
		return 0, nil, err
	}
	u, err := s.store.GetUser(id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, &u, nil
}

func (s *Server) updateUser(q *request) (int, any, error) {
	id, err := userID(q)
	if err != nil {
		return 0, nil, err
	}
	var u api.User
	if err := q.decode(&u); err != nil {
		return 0, nil, err
	}
	if u, err = s.store.UpdateUser(id, u); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, &u, nil
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
	return http.StatusOK, &api.TodoList{Todos: s.store.ListTodos()}, nil
}

func (s *Server) createTodo(q *request) (int, any, error) {
	var t api.Todo
	if err := q.decode(&t); err != nil {
		return 0, nil, err
	}
	t, err := s.store.CreateTodo(t)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, &t, nil
}

func (s *Server) getTodo(q *request) (int, any, error) {
	t, err := s.store.GetTodo(q.id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, &t, nil
}

func (s *Server) updateTodo(q *request) (int, any, error) {
	var t api.Todo
	if err := q.decode(&t); err != nil {
		return 0, nil, err
	}
	t, err := s.store.UpdateTodo(q.id, t)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, &t, nil
}

func (s *Server) deleteTodo(q *request) (int, any, error) {
	if err := s.store.DeleteTodo(q.id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) echo(q *request) (int, any, error) {
	var req api.EchoRequest
	if err := q.decode(&req); err != nil {
		return 0, nil, err
	}
	if err := req.Validate(); err != nil {
		return 0, nil, err
	}
	resp := api.Echo(req)
	return http.StatusOK, &resp, nil
}
