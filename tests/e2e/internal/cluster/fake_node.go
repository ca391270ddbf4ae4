package cluster

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FakeGPUNode is a Ready Node with no kubelet behind it, as the scenarios and the benchmark create
// them: 64 CPUs, 512Gi of memory, 110 pods, `gpus` of nvidia.com/gpu and the `extra` resources
// (MIG instances) allocatable, and the given labels.
func FakeGPUNode(name string, labels map[string]string, gpus int64, extra map[string]int64) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		"nvidia.com/gpu":      *resource.NewQuantity(gpus, resource.DecimalSI),
	}
	for r, v := range extra {
		res[corev1.ResourceName(r)] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "fake node, no kubelet", LastHeartbeatTime: now, LastTransitionTime: now,
			}},
		},
	}
}
