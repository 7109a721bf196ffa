package findings

import "github.com/gpulens/gpulens/analyzer/fleet"

// HAMiTenant is the model's (query.ReadHAMi reads them).
type HAMiTenant = fleet.HAMiTenant
