// Command gpulens is the analyzer and its CLI: it reads GPU metrics back
// through PromQL and turns them into findings, recommendations and reports.
package main

import (
	"os"
)

func main() {
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}
