package reclaim

import "fmt"

func sprintf(format, path string) string { return fmt.Sprintf(format, path) }
