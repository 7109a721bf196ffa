package nvml

import (
	"errors"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
)

// TestOpenWithoutDriver loads the real libnvidia-ml, which machines without
// an NVIDIA driver (CI) do not have.
func TestOpenWithoutDriver(t *testing.T) {
	b, err := Open(Options{Logger: quietLogger()})
	if err == nil {
		_ = b.Close()
		t.Skip("an NVIDIA driver is installed here")
	}
	if !errors.Is(err, gonvml.ERROR_LIBRARY_NOT_FOUND) {
		t.Errorf("error %q does not wrap ERROR_LIBRARY_NOT_FOUND", err)
	}
	assertExplains(t, err)
}

func TestInitFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		init func() gonvml.Return
		is   error
		text string
	}{
		{"driver not loaded", func() gonvml.Return { return gonvml.ERROR_DRIVER_NOT_LOADED }, gonvml.ERROR_DRIVER_NOT_LOADED, "ERROR_DRIVER_NOT_LOADED"},
		{"library not found", func() gonvml.Return { return gonvml.ERROR_LIBRARY_NOT_FOUND }, gonvml.ERROR_LIBRARY_NOT_FOUND, "ERROR_LIBRARY_NOT_FOUND"},
		{"panic", func() gonvml.Return { panic("libnvidia-ml.so.1: cannot open shared object file") }, nil, "cannot open shared object file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dgxh100.New()
			srv.InitFunc = tc.init
			b, err := New(srv, Options{Logger: quietLogger()})
			if err == nil {
				_ = b.Close()
				t.Fatal("New succeeded")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q does not wrap %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q does not carry %q", err, tc.text)
			}
			assertExplains(t, err)
		})
	}
}

func assertExplains(t *testing.T, err error) {
	t.Helper()
	for _, want := range []string{"NVML could not be loaded", "NVIDIA driver installed", "container runtime", "--backend=sim"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestDeviceCountFailure(t *testing.T) {
	srv := dgxh100.New()
	shut := false
	srv.ShutdownFunc = func() gonvml.Return { shut = true; return gonvml.SUCCESS }
	srv.DeviceGetCountFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_UNKNOWN }
	if _, err := New(srv, Options{Logger: quietLogger()}); !errors.Is(err, gonvml.ERROR_UNKNOWN) {
		t.Errorf("err = %v", err)
	}
	if !shut {
		t.Error("NVML left initialised after a failed New")
	}
}
