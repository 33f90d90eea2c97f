//! What `status NODE` reads of the store: the node's slice as Harvester's maintenance reads it
//! ([`Store::slice_on`]), and beside it the other Pods on the node, every migration (the cluster's
//! limits count them all) and every PodDisruptionBudget.

use cluster_model::object::ObjectExt;
use serde_json::Value;

use super::store::{Held, parse};
use super::{Slice, Store};

/// The objects a node's diagnosis reads: its slice and what `status` adds to it.
#[derive(Debug, Default)]
pub struct NodeObjects {
    /// The slice, its Pods moved to [`NodeObjects::pods`].
    pub slice: Slice,
    /// The launcher Pods of the node's VMIs, and every Pod on the node that no VMI owns (what a
    /// budget may cover).
    pub pods: Vec<Value>,
    /// Every VirtualMachineInstanceMigration (the cluster's limits count them all).
    pub migrations: Vec<Value>,
    /// Every `policy/v1` PodDisruptionBudget read.
    pub budgets: Vec<Value>,
}

impl Store {
    /// The objects of `node`'s diagnosis.
    pub fn node_objects(&self, node: &str) -> Result<NodeObjects, String> {
        let mut slice = self.slice_on(node)?;
        let parsed = |held: Vec<&Held>| held.into_iter().map(parse).collect::<Result<Vec<_>, _>>();
        let others = self
            .pods
            .iter()
            .filter(|pod| pod.owner.is_none() && pod.link.as_deref() == Some(node))
            .collect();
        let mut pods = std::mem::take(&mut slice.pods);
        pods.extend(parsed(others)?);
        Ok(NodeObjects {
            pods,
            migrations: self.migrations()?,
            budgets: parsed(self.budgets.iter().collect())?,
            slice,
        })
    }

    /// `Ok` when `node` is among the Nodes read; else which nodes are (`maintenance`, `status`).
    pub fn known_node(&self, node: &str) -> Result<(), String> {
        let known: Vec<&str> = self.nodes().iter().map(|n| n.name()).collect();
        if known.contains(&node) {
            return Ok(());
        }
        let known = if known.is_empty() {
            "none; add `kubectl get nodes -o json`".to_owned()
        } else {
            known.join(", ")
        };
        Err(format!(
            "node {node} is not in the input (nodes read: {known})"
        ))
    }

    /// Whether any VirtualMachineInstanceMigration, any PodDisruptionBudget was read.
    pub fn has_status_kinds(&self) -> (bool, bool) {
        (!self.migrations.is_empty(), !self.budgets.is_empty())
    }

    /// Every VirtualMachineInstanceMigration read.
    pub fn migrations(&self) -> Result<Vec<Value>, String> {
        self.migrations.iter().map(parse).collect()
    }
}
