package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"time"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// dumpSnapshot samples the backend twice, interval apart (GPM ratios need
// two samples), and writes the second snapshot as JSON: what the backend
// read from the library, before any series is built. It is how a real
// GPU's answers are recorded as a fixture (scripts/gpu-smoke.sh).
func dumpSnapshot(ctx context.Context, b gpu.Backend, interval time.Duration, w io.Writer) error {
	if _, err := b.Sample(ctx); err != nil {
		return err
	}
	select {
	case <-time.After(interval):
	case <-ctx.Done():
		return ctx.Err()
	}
	snap, err := b.Sample(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonSafe(reflect.ValueOf(snap)))
}

// jsonSafe turns v into maps and slices encoding/json accepts: gpu.NA
// (NaN) becomes null, which is what it means, instead of an encoding error.
func jsonSafe(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return jsonSafe(v.Elem())
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			return t
		}
		out := map[string]any{}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out[f.Name] = jsonSafe(v.Field(i))
			}
		}
		return out
	case reflect.Slice, reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsonSafe(v.Index(i))
		}
		return out
	case reflect.Map:
		out := map[string]any{}
		for _, k := range v.MapKeys() {
			out[fmt.Sprint(k.Interface())] = jsonSafe(v.MapIndex(k))
		}
		return out
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
		return nil
	}
	return v.Interface()
}
