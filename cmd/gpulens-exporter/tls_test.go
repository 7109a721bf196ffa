package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and returns its
// pool, so the client verifies the server for real.
func writeCert(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "gpulens-e2e"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// TestTLSAndBasicAuth runs the binary with a real exporter-toolkit web
// config: TLS with a certificate and bcrypt basic auth.
func TestTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	pool := writeCert(t, dir)
	const password = "s3cr3t-scrape-password"
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "web-config.yml")
	os.WriteFile(cfg, []byte("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"+
		"basic_auth_users:\n  prometheus: "+string(hash)+"\n"), 0o600)

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	p := startExporter(t, client, "https", append(simArgs, "--web.config.file="+cfg)...)

	do := func(user, pass string) (int, string) {
		req, _ := http.NewRequest("GET", "https://"+p.addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := do("", ""); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", code)
	}
	if code, _ := do("prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := do("prometheus", password)
		if code == http.StatusOK && strings.Contains(body, "gpulens_gpu_up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("authorised scrape: %d\n%s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Plain HTTP must not be served on the TLS port.
	if resp, err := http.Get("http://" + p.addr + "/metrics"); err == nil {
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP served metrics on a TLS listener")
		}
		resp.Body.Close()
	}
	if strings.Contains(p.stderr.String(), password) {
		t.Error("the password appears in the exporter's logs")
	}
}
