package inventory

// Team returns the team a namespace belongs to: its team label, or the
// namespace itself when it is unlabelled or unknown, so that reports
// never lump unrelated namespaces into one "unknown" team.
func (inv *Inventory) Team(namespace string) string {
	if inv != nil {
		if ns, ok := inv.Namespaces[namespace]; ok && ns.Team != "" {
			return ns.Team
		}
	}
	return namespace
}
