// Package podresourcestest serves the kubelet pod-resources v1 API on a unix
// socket with canned answers: a real grpc.Server, so clients under test go
// through the same transport, framing and message limits as against a
// kubelet. The simulated kubelet of the exporter uses Serve outside tests.
package podresourcestest
