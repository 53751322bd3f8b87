package target

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The shop: a small flow to probe (docs/templates.md, "Flows"). POST
// /login takes {"user": "..."} and answers a token after a little work;
// GET /items/{id} answers only a request that carries it as
// "Authorization: Bearer <token>". A token is the user and an HMAC of it
// under a key drawn when the target starts, so checking one needs no state.
const (
	ShopLoginWork = 2 * time.Millisecond // /login: time to answer
	shopMaxBody   = 4 << 10
)

type shop struct{ key []byte }

func newShop() shop {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return shop{key: key}
}

func (s shop) sign(user string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(user))
	return user + "." + hex.EncodeToString(m.Sum(nil))
}

func (s shop) valid(token string) bool {
	i := strings.LastIndexByte(token, '.')
	return i > 0 && hmac.Equal([]byte(s.sign(token[:i])), []byte(token))
}

// login answers {"token": ...} for a JSON body naming a user.
func (s shop) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		targetText(w, http.StatusMethodNotAllowed, "POST {\"user\": \"name\"}\n")
		return
	}
	var body struct {
		User string `json:"user"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, shopMaxBody)).Decode(&body); err != nil || body.User == "" || strings.Contains(body.User, ".") {
		targetText(w, http.StatusBadRequest, "POST {\"user\": \"name\"} (a name without dots)\n")
		return
	}
	if !waited(w, r, ShopLoginWork) {
		return
	}
	out, _ := json.Marshal(map[string]string{"token": s.sign(body.User)})
	shopJSON(w, http.StatusOK, out)
}

// item answers /items/{id} to a request that carries a token from /login.
func (s shop) item(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(strings.TrimPrefix(r.URL.Path, "/items/"), 10, 32)
	if err != nil {
		targetNotFound.write(w)
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !s.valid(token) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		targetText(w, http.StatusUnauthorized, "a token from POST /login is required: Authorization: Bearer <token>\n")
		return
	}
	shopJSON(w, http.StatusOK, []byte(`{"id": `+strconv.FormatUint(id, 10)+`, "name": "item `+strconv.FormatUint(id, 10)+`"}`))
}

func shopJSON(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
