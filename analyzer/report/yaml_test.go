package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestYAMLIsTheJSON: -o yaml holds what -o json does, field for field, as
// kubectl's two formats do; at 36bc8ff report had no yaml format.
func TestYAMLIsTheJSON(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), fixturePrices(t))
	var j, y bytes.Buffer
	if err := Render(&j, r, "json"); err != nil {
		t.Fatal(err)
	}
	if err := Render(&y, r, "yaml"); err != nil {
		t.Fatal(err)
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal(j.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(y.Bytes(), &fromYAML); err != nil {
		t.Fatalf("the YAML does not decode: %v", err)
	}
	if len(y.Bytes()) < 100 || !reflect.DeepEqual(fromJSON, fromYAML) {
		t.Errorf("the YAML (%d bytes) does not hold the JSON's fields", y.Len())
	}
}
