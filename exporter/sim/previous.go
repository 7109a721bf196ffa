package sim

// Previous is the scenario of the window before the simulated one, as its
// pods declare it: without the pods that are New, and with each pod's
// PreviousUtilization where it has one. A report of the two windows then
// has a week-over-week change to show, the column a team lead reads
// first; a scenario that declares neither gives the same fleet twice.
func (s *Scenario) Previous() *Scenario {
	prev := *s
	prev.Nodes = make([]Node, len(s.Nodes))
	for i, n := range s.Nodes {
		n.Pods = nil
		for _, p := range s.Nodes[i].Pods {
			if p.New {
				continue
			}
			if p.PreviousUtilization > 0 {
				p.Utilization = p.PreviousUtilization
			}
			n.Pods = append(n.Pods, p)
		}
		prev.Nodes[i] = n
	}
	return &prev
}
