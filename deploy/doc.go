// Package deploy holds loadprobe's deployment manifests (deploy/kubernetes,
// a kustomization for a StatefulSet of sharded replicas). It has no code:
// its test renders the manifests with kustomize and decodes every object
// strictly against the real Kubernetes and Prometheus Operator types.
package deploy
