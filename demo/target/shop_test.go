package target

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestShop(t *testing.T) {
	srv, c := targetTestServer(t, Options{}, nil)
	do := func(method, path, body, auth string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := do("POST", "/login", `{"user": "ann"}`, "")
	var login struct{ Token string }
	if err := json.Unmarshal([]byte(body), &login); code != 200 || err != nil || login.Token == "" {
		t.Fatalf("POST /login: %d %q", code, body)
	}
	forged := "bob" + login.Token[strings.IndexByte(login.Token, '.'):]
	for _, tc := range []struct {
		name, method, path, body, auth string
		code                           int
		want                           string
	}{
		{"item with the token", "GET", "/items/42", "", "Bearer " + login.Token, 200, `"id": 42`},
		{"item without a token", "GET", "/items/42", "", "", 401, "token from POST /login"},
		{"item with a forged token", "GET", "/items/42", "", "Bearer " + forged, 401, "token"},
		{"item with a basic credential", "GET", "/items/42", "", "Basic " + login.Token, 401, "token"},
		{"item not a number", "GET", "/items/x", "", "Bearer " + login.Token, 404, "not found"},
		{"login by GET", "GET", "/login", "", "", 405, "POST"},
		{"login without a user", "POST", "/login", `{}`, "", 400, "user"},
		{"login not JSON", "POST", "/login", `user=ann`, "", 400, "user"},
	} {
		if code, body := do(tc.method, tc.path, tc.body, tc.auth); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, code, body, tc.code, tc.want)
		}
	}
}
