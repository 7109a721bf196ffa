package e2e

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestSecretsNeverLogged runs the analyzer against a real Prometheus behind
// an authenticating front that echoes the Authorization header in its
// errors, and posts to webhooks that quote their URL back or cannot be
// reached: every retry, warning and error is printed. No line of any run,
// nor any --help, may hold the bearer token, the basic-auth password (plain
// or base64 with the user) or the webhook URL's secret path.
func TestSecretsNeverLogged(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	prometheus := testenv.LookPath(t, "prometheus")
	bin := gpulens(t)
	_, addr := serveBlocks(t, prometheus, backfilled(t, promtool))
	target, _ := url.Parse("http://" + addr)

	const (
		token    = "tok-9f8e7d6c5b4a-bearer"
		user     = "analyst"
		password = "pw-1a2b3c4d5e6f-basic"
		hookPath = "/services/T0000/B0000/hooksecret-5a6b7c8d"
	)
	userPass := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	secrets := map[string]string{"bearer token": token, "password": password, "basic credentials": userPass,
		"webhook path": "hooksecret-5a6b7c8d"}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	passwordFile := filepath.Join(dir, "password")
	for p, v := range map[string]string{tokenFile: token + "\n", passwordFile: password + "\n"} {
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// The front accepts either credential; every third request, and every
	// request of a "broken" front, is refused with the header quoted back.
	front := func(broken bool) *httptest.Server {
		proxy := httputil.NewSingleHostReverseProxy(target)
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			if auth != "Bearer "+token && auth != "Basic "+userPass {
				http.Error(w, "unauthorized: got Authorization: "+auth, http.StatusUnauthorized)
				return
			}
			if broken || n.Add(1)%3 == 0 {
				http.Error(w, "upstream overloaded, request had Authorization: "+auth, http.StatusBadGateway)
				return
			}
			r.Header.Del("Authorization")
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	prom, broken := front(false), front(true)
	var posts atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) == 1 {
			http.Error(w, "hook "+r.URL.Path+" is rate limited", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hook.Close)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such hook: "+r.URL.String(), http.StatusNotFound)
	}))
	t.Cleanup(refusing.Close)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()

	window := []string{"--until", simEnd.Format(time.RFC3339), "--since", "6h", "--no-kubernetes"}
	bearer := []string{"--bearer-token-file", tokenFile}
	basic := []string{"--basic-auth-user", user, "--basic-auth-password-file", passwordFile}
	runs := []struct {
		name     string
		args     []string
		wantCode int
		want     []string // proof that the run printed what could leak
	}{
		{"report, bearer, retried queries and webhook", cat([]string{"report", "--prometheus-url", prom.URL, "--retries", "3"}, bearer, window,
			[]string{"--send-webhook", hook.URL + hookPath}), 0, []string{"retrying PromQL API call", "Sent the report"}},
		{"report, basic auth, refusing webhook", cat([]string{"report", "--prometheus-url", prom.URL, "--retries", "3"}, basic, window,
			[]string{"--send-webhook", refusing.URL + hookPath}), 1, []string{"retrying PromQL API call", "404 Not Found"}},
		{"report, unreachable webhook", cat([]string{"report", "--prometheus-url", prom.URL, "--retries", "3"}, bearer, window,
			[]string{"--send-webhook", dead.URL + hookPath + "?token=" + token}), 1, []string{"the report was not sent"}},
		{"recommend, bearer, failing Prometheus", cat([]string{"recommend", "--prometheus-url", broken.URL, "--retries", "1"}, bearer, window), 3,
			[]string{"502 Bad Gateway", "upstream overloaded"}},
		{"recommend, basic auth, failing Prometheus", cat([]string{"recommend", "--prometheus-url", broken.URL, "--retries", "0"}, basic, window), 3,
			[]string{"502 Bad Gateway"}},
		{"report --help with secrets given", cat([]string{"report", "--help"}, bearer, basic, []string{"--send-webhook", hook.URL + hookPath}), 0, []string{"--send-webhook"}},
		{"recommend --help", cat([]string{"recommend", "--help"}, bearer), 0, []string{"--bearer-token-file"}},
		{"demo --help", []string{"demo", "--help"}, 0, nil},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := exec.Command(bin, r.args...)
			cmd.Stdout, cmd.Stderr = &out, &out
			code := 0
			if err := cmd.Run(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) {
					t.Fatal(err)
				}
				code = exit.ExitCode()
			}
			if code != r.wantCode {
				t.Errorf("exit %d, want %d:\n%s", code, r.wantCode, tail(out.String()))
			}
			for _, w := range r.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q, so the run did not exercise what it should:\n%s", w, tail(out.String()))
				}
			}
			for i, line := range strings.Split(out.String(), "\n") {
				for what, s := range secrets {
					if strings.Contains(line, s) {
						t.Errorf("line %d shows the %s: %s", i+1, what, line)
					}
				}
			}
		})
	}
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func tail(s string) string {
	if len(s) > 3000 {
		return fmt.Sprintf("…%s", s[len(s)-3000:])
	}
	return s
}
