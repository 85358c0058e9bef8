package httpapi

import "net/http"

// The user's records (Options.Records): the same list, get, create,
// update and delete as /users, over records of the user's own shape,
// encoded by the same codecs in the models the dataset keeps for each.

func (s *Server) listRecords(q *request) (int, any, error) {
	v, err := s.records.List(q.out.Codec.Name())
	return http.StatusOK, v, err
}

func (s *Server) getRecord(q *request) (int, any, error) {
	v, err := s.records.Get(q.id, q.out.Codec.Name())
	return http.StatusOK, v, err
}

func (s *Server) createRecord(q *request) (int, any, error) {
	in, body, err := q.body()
	if err != nil {
		return 0, nil, err
	}
	v, err := s.records.Create(body, in.Codec.Name(), q.out.Codec.Name())
	return http.StatusCreated, v, err
}

func (s *Server) putRecord(q *request) (int, any, error) {
	in, body, err := q.body()
	if err != nil {
		return 0, nil, err
	}
	v, err := s.records.Put(q.id, body, in.Codec.Name(), q.out.Codec.Name())
	return http.StatusOK, v, err
}

func (s *Server) deleteRecord(q *request) (int, any, error) {
	return http.StatusNoContent, nil, s.records.Delete(q.id)
}
