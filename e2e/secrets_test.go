package e2e

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestSecretsNeverLogged runs the analyzer against a real Prometheus behind
// an authenticating front that echoes the Authorization header in its
// errors, and posts to webhooks that quote their URL back or cannot be
// reached, then runs gpulens serve for a few cycles against a real
// Alertmanager and VictoriaMetrics, one Alertmanager that quotes the
// request's URL and Authorization header back, and ones that cannot be
// reached: every retry, warning and error is printed. No line of any run,
// nor any --help, may hold the bearer token, the basic-auth password (plain
// or base64 with the user), the webhook URL's secret path (given as a flag,
// a file or $GPULENS_WEBHOOK_URL), the Alertmanagers' password or the push
// URL's token.
func TestSecretsNeverLogged(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	prometheus := testenv.LookPath(t, "prometheus")
	// serve's: looked up first, so that a missing one skips (or in CI
	// fails) the test before it starts.
	vm := testenv.Env(t, "GPULENS_TEST_VICTORIAMETRICS_URL")
	am := testenv.StartAlertmanager(t)
	bin := gpulens(t)
	_, addr := serveBlocks(t, prometheus, backfilled(t, promtool))
	target, _ := url.Parse("http://" + addr)

	const (
		token      = "tok-9f8e7d6c5b4a-bearer"
		user       = "analyst"
		password   = "pw-1a2b3c4d5e6f-basic"
		hookPath   = "/services/T0000/B0000/hooksecret-5a6b7c8d"
		amUser     = "gpulens"
		amPassword = "ampw-7e6d5c4b3a29-alertmanager"
		pushToken  = "pushtok-3c2b1a09f8e7-vm"
	)
	userPass := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	secrets := map[string]string{"bearer token": token, "password": password, "basic credentials": userPass,
		"webhook path": "hooksecret-5a6b7c8d", "Alertmanager password": amPassword,
		"Alertmanager credentials": base64.StdEncoding.EncodeToString([]byte(amUser + ":" + amPassword)), "push token": pushToken}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	passwordFile := filepath.Join(dir, "password")
	for p, v := range map[string]string{tokenFile: token + "\n", passwordFile: password + "\n"} {
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// The front accepts either credential; every third request, and every
	// (a PromQL call or a remote read: each is retried under its own
	// "retrying ..." line, and which the third request is depends on the
	// order the analysis reads in)
	// request of a "broken" front, is refused with the header quoted back.
	// A request refused once is answered when it is retried: with queries
	// two at a time, refusing by count alone refused one query's every
	// attempt now and then, and the test failed on the retries' limit
	// rather than on what it checks.
	front := func(broken bool) *httptest.Server {
		proxy := httputil.NewSingleHostReverseProxy(target)
		var n atomic.Int32
		var refused sync.Map
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			if auth != "Bearer "+token && auth != "Basic "+userPass {
				http.Error(w, "unauthorized: got Authorization: "+auth, http.StatusUnauthorized)
				return
			}
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			key := r.Method + " " + r.URL.String() + " " + string(body)
			_, again := refused.Load(key)
			if broken || (!again && n.Add(1)%3 == 0) {
				refused.Store(key, true)
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
	hookFile := filepath.Join(dir, "hook-url")
	if err := os.WriteFile(hookFile, []byte(hook.URL+hookPath+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		name     string
		args     []string
		env      string // $GPULENS_WEBHOOK_URL
		wantCode int
		want     []string // proof that the run printed what could leak
	}{
		{"report, bearer, retried queries and webhook", cat([]string{"report", "--prometheus-url", prom.URL, "--retries", "3"}, bearer, window,
			[]string{"--send-webhook", hook.URL + hookPath}), "", 0, []string{"retrying ", "Sent the report"}},
		{"report, basic auth, webhook from a file", cat([]string{"report", "--prometheus-url", prom.URL, "--retries", "3"}, basic, window,
			[]string{"--send-webhook-file", hookFile}), "", 0, []string{"retrying ", "Sent the report"}},
		{"report, refusing webhook from the environment", cat([]string{"report", "--prometheus-url", prom.URL, "--retries", "3"}, basic, window),
			refusing.URL + hookPath, 1, []string{"retrying ", "404 Not Found"}},
		{"report, unreachable webhook", cat([]string{"report", "--prometheus-url", prom.URL, "--retries", "3"}, bearer, window,
			[]string{"--send-webhook", dead.URL + hookPath + "?token=" + token}), "", 1, []string{"the report was not sent"}},
		{"report, webhook from the environment without a scheme", cat([]string{"report", "--prometheus-url", prom.URL}, bearer, window),
			"hooks.slack.com" + hookPath, 2, []string{"$GPULENS_WEBHOOK_URL: not an http(s) URL"}},
		{"recommend, bearer, failing Prometheus", cat([]string{"recommend", "--prometheus-url", broken.URL, "--retries", "1"}, bearer, window), "", 3,
			[]string{"502 Bad Gateway", "upstream overloaded"}},
		{"recommend, basic auth, failing Prometheus", cat([]string{"recommend", "--prometheus-url", broken.URL, "--retries", "0"}, basic, window), "", 3,
			[]string{"502 Bad Gateway"}},
		{"report --help with secrets given", cat([]string{"report", "--help"}, bearer, basic, []string{"--send-webhook", hook.URL + hookPath}), hook.URL + hookPath, 0,
			[]string{"--send-webhook-file"}},
		{"serve --help with secrets given", cat([]string{"serve", "--help"}, bearer, []string{"--alertmanager.url", "http://" + amUser + ":" + amPassword + "@am:9093",
			"--push.url", "http://vm:8428/api/v1/import/prometheus?authKey=" + pushToken}), "", 0, []string{"--alertmanager.url"}},
		{"recommend --help", cat([]string{"recommend", "--help"}, bearer), "", 0, []string{"--bearer-token-file"}},
		{"demo --help", []string{"demo", "--help"}, "", 0, nil},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := exec.Command(bin, r.args...)
			cmd.Env = append(os.Environ(), "GPULENS_WEBHOOK_URL="+r.env)
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
			checkOutput(t, out.String(), r.want, secrets)
		})
	}

	// Credentials in the Prometheus URL's user info, and in the
	// environment instead of files: the front echoes the Authorization
	// header, which for user info is the base64 of user:password too.
	withCreds := func(u string) string { return strings.Replace(u, "http://", "http://"+user+":"+password+"@", 1) }
	envRuns := []struct {
		name     string
		args     []string
		env      []string
		wantCode int
		want     []string
	}{
		{"report, basic auth in the URL, retried queries", cat([]string{"report", "--prometheus-url", withCreds(prom.URL), "--retries", "3"}, window), nil, 0,
			// A PromQL call or a remote read: which the front refuses varies.
			[]string{"retrying "}},
		{"recommend, basic auth in the URL, failing Prometheus", cat([]string{"recommend", "--prometheus-url", withCreds(broken.URL), "--retries", "0"}, window), nil, 3,
			[]string{"502 Bad Gateway", "upstream overloaded"}},
		{"recommend, basic auth from the environment, failing Prometheus", cat([]string{"recommend", "--prometheus-url", broken.URL, "--retries", "0"}, window),
			[]string{"GPULENS_BASIC_AUTH_USER=" + user, "GPULENS_BASIC_AUTH_PASSWORD=" + password}, 3, []string{"502 Bad Gateway", "upstream overloaded"}},
		{"recommend, bearer token from the environment, failing Prometheus", cat([]string{"recommend", "--prometheus-url", broken.URL, "--retries", "1"}, window),
			[]string{"GPULENS_BEARER_TOKEN=" + token}, 3, []string{"502 Bad Gateway", "upstream overloaded"}},
	}
	for _, r := range envRuns {
		t.Run(r.name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := exec.Command(bin, r.args...)
			cmd.Env = append(os.Environ(), r.env...)
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
			checkOutput(t, out.String(), r.want, secrets)
		})
	}

	// gpulens serve, for a few analysis cycles: every retried query (a
	// PromQL call, or a remote read: which of serve's concurrent requests
	// the front refuses varies from run to run),
	// refused or unreachable Alertmanager and failed push is logged, at
	// debug level. Its Alertmanagers take basic auth as user info, and the
	// push URL a token in its query (VictoriaMetrics' authKey).
	amAddr := strings.TrimPrefix(am.URL, "http://")
	echoingAM := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unauthorized: "+r.URL.String()+" with Authorization: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	t.Cleanup(echoingAM.Close)
	withUser := func(u string) string { return strings.Replace(u, "http://", "http://"+amUser+":"+amPassword+"@", 1) }
	testRun := fmt.Sprintf("secrets%d", time.Now().UnixNano())
	amPasswordFile := filepath.Join(dir, "am-password")
	if err := os.WriteFile(amPasswordFile, []byte(amPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serveRuns := []struct {
		name string
		args []string
		// missing says what the run has yet to show, "" once it has.
		missing func(out string) string
		want    []string
		env     []string
	}{
		{"serve, bearer, real Alertmanager and VictoriaMetrics, echoing Alertmanager",
			cat([]string{"serve", "--prometheus-url", prom.URL, "--retries", "3"}, bearer, window, []string{
				"--interval", "30s", "--alertmanager.url", withUser("http://" + amAddr), "--alertmanager.url", withUser(echoingAM.URL) + "/prefix",
				"--alertmanager.resend-interval", "500ms", "--push.url", vm + "/api/v1/import/prometheus?authKey=" + pushToken,
				"--push.interval", "300ms", "--push.extra-label", "gpulens_test_run=" + testRun}),
			func(out string) string {
				alerts, _ := am.Alerts()
				return lacking(map[string]bool{"alerts in Alertmanager": len(alerts) > 0, "findings in VictoriaMetrics": pushedFindings(vm, testRun),
					"an undelivered batch": strings.Contains(out, "alerts not delivered"), "a retried query": strings.Contains(out, "retrying PromQL API call") || strings.Contains(out, "retrying remote read")})
			},
			[]string{"401 Unauthorized", "analysis done"}, nil},
		{"serve, basic auth, failing Prometheus, unreachable Alertmanager and push",
			cat([]string{"serve", "--prometheus-url", broken.URL, "--retries", "0"}, basic, window, []string{
				"--interval", "1s", "--alertmanager.url", withUser(dead.URL), "--push.interval", "300ms",
				"--push.url", withUser(dead.URL) + "/api/v1/import/prometheus?authKey=" + pushToken}),
			func(out string) string {
				return lacking(map[string]bool{"two failed analyses": strings.Count(out, "analysis failed") >= 2,
					"two failed pushes": strings.Count(out, "push failed") >= 2})
			},
			[]string{"502 Bad Gateway", "connection refused"}, nil},
		{"serve, basic auth in the URL, Alertmanager password from a file, push token from the environment, both echoing",
			cat([]string{"serve", "--prometheus-url", withCreds(prom.URL), "--retries", "3"}, window, []string{
				"--interval", "30s", "--alertmanager.url", strings.Replace(echoingAM.URL, "http://", "http://"+amUser+"@", 1),
				"--alertmanager.basic-auth-password-file", amPasswordFile, "--alertmanager.resend-interval", "500ms",
				"--push.url", echoingAM.URL + "/api/v1/import/prometheus", "--push.interval", "300ms"}),
			func(out string) string {
				return lacking(map[string]bool{"an undelivered batch": strings.Contains(out, "alerts not delivered"),
					"two failed pushes": strings.Count(out, "push failed") >= 2})
			},
			[]string{"401 Unauthorized", "analysis done", "Basic <redacted>", "Bearer <redacted>"}, []string{"GPULENS_PUSH_TOKEN=" + pushToken}},
	}
	for _, r := range serveRuns {
		t.Run(r.name, func(t *testing.T) {
			var out lockedBuffer
			cmd := exec.Command(bin, append(r.args, "--web.listen-address", testenv.FreeAddr(t), "--log.level", "debug")...)
			cmd.Env = append(os.Environ(), r.env...)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			deadline := time.Now().Add(90 * time.Second)
			for r.missing(out.String()) != "" {
				select {
				case err := <-done:
					t.Fatalf("serve exited early (%v):\n%s", err, tail(out.String()))
				default:
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					<-done
					t.Fatalf("serve did not show %s within 90s:\n%s", r.missing(out.String()), tail(out.String()))
				}
				time.Sleep(200 * time.Millisecond)
			}
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve on SIGTERM: %v", err)
				}
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Errorf("serve did not stop on SIGTERM")
				<-done
			}
			checkOutput(t, out.String(), r.want, secrets)
		})
	}
}

// checkOutput fails the test for every line of out that holds a secret,
// and for every proof in want that it lacks.
func checkOutput(t *testing.T, out string, want []string, secrets map[string]string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q, so the run did not exercise what it should:\n%s", w, tail(out))
		}
	}
	for i, line := range strings.Split(out, "\n") {
		for what, s := range secrets {
			if strings.Contains(line, s) {
				t.Errorf("line %d shows the %s: %s", i+1, what, line)
			}
		}
	}
}

// lacking names the conditions that do not hold.
func lacking(conds map[string]bool) string {
	var out []string
	for what, ok := range conds {
		if !ok {
			out = append(out, what)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// pushedFindings reports whether VictoriaMetrics holds gpulens_finding
// series pushed by the test run run.
func pushedFindings(vm, run string) bool {
	q := url.Values{"match[]": {`gpulens_finding{gpulens_test_run="` + run + `"}`}}
	resp, err := http.Get(vm + "/api/v1/export?" + q.Encode())
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"__name__":"gpulens_finding"`))
}

// lockedBuffer is a process's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
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
