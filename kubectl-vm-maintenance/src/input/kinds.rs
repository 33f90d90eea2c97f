//! The kinds the commands list from the live cluster: the previews' ([`KINDS`]) and what
//! `status` adds to them ([`STATUS_KINDS`]).

/// One kind to list: its API group/version, kind, resource, whether it is namespaced, a label
/// selector, and a fixed namespace (Longhorn's objects live in `longhorn-system`).
pub(super) struct Listed {
    pub(super) api_version: &'static str,
    pub(super) kind: &'static str,
    pub(super) plural: &'static str,
    pub(super) namespaced: bool,
    pub(super) selector: Option<&'static str>,
    pub(super) namespace: Option<&'static str>,
    /// Listed in every namespace whatever `-n` says (the KubeVirt CR, what a node runs).
    pub(super) cluster_wide: bool,
    /// Only the objects on the node `status` diagnoses (`fieldSelector=spec.nodeName=NODE`).
    pub(super) on_node: bool,
}

const fn kind(api_version: &'static str, kind: &'static str, plural: &'static str) -> Listed {
    Listed {
        api_version,
        kind,
        plural,
        namespaced: true,
        selector: None,
        namespace: None,
        cluster_wide: false,
        on_node: false,
    }
}

const INSTANCETYPES: &str = "instancetype.kubevirt.io/v1beta1";

/// What the previews read, in this order.
pub(super) const KINDS: [Listed; 13] = [
    Listed {
        cluster_wide: true,
        ..kind("kubevirt.io/v1", "KubeVirt", "kubevirts")
    },
    kind("kubevirt.io/v1", "VirtualMachine", "virtualmachines"),
    kind(
        "kubevirt.io/v1",
        "VirtualMachineInstance",
        "virtualmachineinstances",
    ),
    Listed {
        selector: Some("kubevirt.io=virt-launcher"),
        ..kind("v1", "Pod", "pods")
    },
    Listed {
        namespaced: false,
        ..kind("v1", "Node", "nodes")
    },
    kind("v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
    Listed {
        namespaced: false,
        ..kind("v1", "PersistentVolume", "persistentvolumes")
    },
    Listed {
        namespaced: false,
        ..kind(
            INSTANCETYPES,
            "VirtualMachineClusterInstancetype",
            "virtualmachineclusterinstancetypes",
        )
    },
    kind(
        INSTANCETYPES,
        "VirtualMachineInstancetype",
        "virtualmachineinstancetypes",
    ),
    Listed {
        namespaced: false,
        ..kind(
            INSTANCETYPES,
            "VirtualMachineClusterPreference",
            "virtualmachineclusterpreferences",
        )
    },
    kind(
        INSTANCETYPES,
        "VirtualMachinePreference",
        "virtualmachinepreferences",
    ),
    Listed {
        namespace: Some("longhorn-system"),
        ..kind("longhorn.io/v1beta2", "Volume", "volumes")
    },
    Listed {
        namespace: Some("longhorn-system"),
        ..kind("longhorn.io/v1beta2", "Replica", "replicas")
    },
];

/// What `status` reads besides the previews' kinds: the VMIs' migrations, every
/// PodDisruptionBudget, and the Pods on the node that are not launchers (what a budget covers).
pub(super) const STATUS_KINDS: [Listed; 3] = [
    kind(
        "kubevirt.io/v1",
        "VirtualMachineInstanceMigration",
        "virtualmachineinstancemigrations",
    ),
    kind("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets"),
    Listed {
        selector: Some("kubevirt.io!=virt-launcher"),
        on_node: true,
        ..kind("v1", "Pod", "pods")
    },
];
