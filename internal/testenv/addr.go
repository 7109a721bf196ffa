package testenv

import (
	"net"
	"testing"
)

// FreeAddr is a loopback address no one listens on now, for a server a
// test starts as a separate program (which must bind it itself). Another
// process may take it in between; the tests that use it start their
// server at once and fail, naming the address, if it will not bind.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
