//! Every object of the input that a preview reads, held as its own JSON text until a preview
//! reaches it.
//!
//! A `serde_json::Value` tree takes about 16 times the text it was read from (each JSON object a
//! B-tree node of some 600 bytes), so the kinds a large cluster has thousands of (VMs, VMIs,
//! launcher Pods, claims, PersistentVolumes) are kept as text with the names that link them, and
//! a preview parses the objects of some VMs at a time ([`Store::slice`]): their VMs, VMIs and
//! launcher Pods, the claims of their namespaces and the volumes those are bound to. So are
//! Longhorn's volumes and replicas, which only the maintenance of a node reads, those of its
//! replicas ([`Store::slice_on`]). The few cluster-wide objects (Nodes, KubeVirt CRs, instance
//! types) are parsed once and go into every slice.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use cluster_model::object::ObjectExt;
use serde_json::Value;
use serde_json::value::RawValue;

use super::files::Source;
use super::head::{self, Class, Head};
use super::slice::Slice;

/// How many VMs (or VMIs) a slice holds: their objects' trees are what a preview holds at once,
/// next to the text of every object.
pub const SLICE: usize = 500;

/// A VM's, VMI's or Pod's namespace (`default` when it names none) and name.
pub type Key = (String, String);

/// The input's objects: see the module's text.
#[derive(Debug, Default)]
pub struct Store {
    /// What was odd but not fatal (a duplicate VM, an item that is not an object or has no
    /// `kind` / `apiVersion`).
    pub notes: Vec<String>,
    /// How many objects had no `kind` or no `apiVersion` (ignored, each a note).
    pub untyped: usize,
    /// VMs in reading order, one per namespace/name (the last one read wins).
    vms: Vec<Held>,
    vmis: Vec<Held>,
    pub(super) pods: Vec<Held>,
    pvcs: Vec<Held>,
    persistent_volumes: Vec<Held>,
    longhorn_volumes: Vec<Held>,
    replicas: Vec<Held>,
    /// VirtualMachineInstanceMigrations and PodDisruptionBudgets (`status` reads them:
    /// `input/node.rs`).
    pub(super) migrations: Vec<Held>,
    pub(super) budgets: Vec<Held>,
    /// What every slice holds: the KubeVirt CRs, instance types and Nodes.
    shared: Slice,
    /// Where the objects a slice looks up are, so that a slice costs what it holds.
    at: Positions,
}

/// The places in the store's lists, by what a slice looks them up by.
#[derive(Debug, Default)]
struct Positions {
    vms: HashMap<Key, Vec<usize>>,
    vmis: HashMap<Key, Vec<usize>>,
    /// Launcher Pods by their namespace and VMI.
    pods: HashMap<Key, Vec<usize>>,
    /// Claims by namespace.
    claims: HashMap<String, Vec<usize>>,
    /// PersistentVolumes by name.
    persistent_volumes: HashMap<String, Vec<usize>>,
}

/// An object kept as its text, with what links it to the others.
#[derive(Debug)]
pub(super) struct Held {
    text: Box<RawValue>,
    pub(super) key: Key,
    /// What links it: see `head::Head`.
    pub(super) link: Option<String>,
    pub(super) owner: Option<String>,
}

impl Store {
    /// The objects of every source, in order; every kind no preview reads is dropped.
    pub fn read(sources: Vec<Source>) -> Result<Store, String> {
        let mut store = Store::default();
        let mut seen: BTreeMap<(String, String), (usize, String)> = BTreeMap::new();
        for source in sources {
            let shown = source.name;
            for (i, text) in source.items.into_iter().enumerate() {
                let head = head::read(text.get()).map_err(|e| format!("{shown}: item {i}: {e}"))?;
                let Some(head) = head else {
                    store
                        .notes
                        .push(format!("{shown}: item {i} is not an object, ignored"));
                    continue;
                };
                if !head.typed {
                    store.untyped += 1;
                    store.notes.push(format!(
                        "{shown}: item {i} ({}) has no kind or apiVersion, ignored",
                        head.described()
                    ));
                    continue;
                }
                store.keep(head, text, &shown, &mut seen)?;
            }
        }
        store.at = Positions {
            vms: positions(&store.vms, |h| Some(h.key.clone())),
            vmis: positions(&store.vmis, |h| Some(h.key.clone())),
            pods: positions(&store.pods, |h| Some((h.key.0.clone(), h.owner.clone()?))),
            claims: positions(&store.pvcs, |h| Some(h.key.0.clone())),
            persistent_volumes: positions(&store.persistent_volumes, |h| Some(h.key.1.clone())),
        };
        let crs = store.shared.kubevirts.len();
        if crs > 1 {
            store.notes.push(format!(
                "{crs} KubeVirt CRs read; KubeVirt honours one: the first is used"
            ));
        }
        Ok(store)
    }

    /// Keeps an object as its text, with what links it; the few cluster-wide ones (KubeVirt
    /// CRs, instance types, Nodes) parsed.
    fn keep(
        &mut self,
        head: Head,
        text: Box<RawValue>,
        shown: &str,
        seen: &mut BTreeMap<(String, String), (usize, String)>,
    ) -> Result<(), String> {
        let Some(class) = head.class else {
            return Ok(());
        };
        let parsed = |text: Box<RawValue>| {
            serde_json::from_str::<Value>(text.get()).map_err(|e| format!("{shown}: {e}"))
        };
        let shared = &mut self.shared;
        match class {
            Class::KubeVirt => shared.kubevirts.push(parsed(text)?),
            Class::Instancetype => shared.instancetypes.push(parsed(text)?),
            Class::Node => shared.nodes.push(parsed(text)?),
            _ => {
                let named = (
                    head.namespace.clone().unwrap_or_default(),
                    head.name.clone().unwrap_or_default(),
                );
                let held = Held {
                    key: (namespace_or_default(&named.0), named.1.clone()),
                    link: head.link,
                    owner: head.owner,
                    text,
                };
                match class {
                    Class::Vm => self.keep_vm(held, named, shown, seen),
                    Class::Vmi => self.vmis.push(held),
                    Class::Pod => self.pods.push(held),
                    Class::Claim => self.pvcs.push(held),
                    Class::PersistentVolume => self.persistent_volumes.push(held),
                    Class::LonghornVolume => self.longhorn_volumes.push(held),
                    Class::Migration => self.migrations.push(held),
                    Class::Budget => self.budgets.push(held),
                    _ => self.replicas.push(held),
                }
            }
        }
        Ok(())
    }

    /// One VM per namespace/name: a VM read again replaces the first, with a note.
    fn keep_vm(
        &mut self,
        vm: Held,
        named: (String, String),
        shown: &str,
        seen: &mut BTreeMap<(String, String), (usize, String)>,
    ) {
        match seen.get(&named) {
            Some((at, first)) if !named.1.is_empty() => {
                self.notes.push(format!(
                    "{}/{}: read again from {shown} (first in {first}); the last one is used",
                    named.0, named.1
                ));
                self.vms[*at] = vm;
            }
            _ => {
                seen.insert(named, (self.vms.len(), shown.to_owned()));
                self.vms.push(vm);
            }
        }
    }

    /// The KubeVirt CRs, in reading order (KubeVirt honours the first).
    pub fn kubevirts(&self) -> &[Value] {
        &self.shared.kubevirts
    }

    pub fn nodes(&self) -> &[Value] {
        &self.shared.nodes
    }

    pub fn vmi_count(&self) -> usize {
        self.vmis.len()
    }

    /// The keys of the VMs, sorted, each once.
    pub fn vm_keys(&self) -> Vec<Key> {
        sorted_keys(&self.vms)
    }

    /// The keys of the VMIs, sorted, each once.
    pub fn vmi_keys(&self) -> Vec<Key> {
        sorted_keys(&self.vmis)
    }

    /// Whether the input has Longhorn's volumes and replicas (both kinds).
    pub fn has_longhorn(&self) -> bool {
        !self.longhorn_volumes.is_empty() && !self.replicas.is_empty()
    }

    /// What Harvester's maintenance of `node` reads: the Longhorn volumes with a started replica
    /// there and all their replicas, the VMIs labelled with the node and those of these volumes,
    /// their VMs, and what [`Store::slice`] adds to them.
    pub fn slice_on(&self, node: &str) -> Result<Slice, String> {
        let here: BTreeSet<&str> = self
            .replicas
            .iter()
            .filter(|r| r.link.as_deref() == Some(node))
            .filter_map(|r| r.owner.as_deref())
            .collect();
        let volumes = self
            .longhorn_volumes
            .iter()
            .filter(|v| here.contains(v.key.1.as_str()))
            .map(parse)
            .collect::<Result<Vec<_>, _>>()?;
        let replicas = self
            .replicas
            .iter()
            .filter(|r| r.owner.as_deref().is_some_and(|v| here.contains(v)))
            .map(parse)
            .collect::<Result<Vec<_>, _>>()?;
        let mut keys: BTreeSet<Key> = self
            .vmis
            .iter()
            .filter(|vmi| vmi.link.as_deref() == Some(node))
            .map(|vmi| vmi.key.clone())
            .collect();
        keys.extend(volumes.iter().flat_map(workloads));
        let owners: Vec<Key> = self
            .vmis
            .iter()
            .filter(|vmi| keys.contains(&vmi.key))
            .filter_map(|vmi| Some((vmi.key.0.clone(), vmi.owner.clone()?)))
            .collect();
        keys.extend(owners);
        let mut slice = self.slice(&keys)?;
        slice.volumes = volumes;
        slice.replicas = replicas;
        Ok(slice)
    }

    /// The objects of the VMs and VMIs of `keys`, parsed: those VMs and VMIs, the launcher Pods
    /// of those VMIs, every claim of their namespaces and the PersistentVolumes those are bound
    /// to; with the cluster-wide objects.
    pub fn slice(&self, keys: &BTreeSet<Key>) -> Result<Slice, String> {
        let namespaces: BTreeSet<String> = keys.iter().map(|k| k.0.clone()).collect();
        let claims = places(&self.at.claims, &namespaces);
        let bound: Vec<String> = claims
            .iter()
            .filter_map(|&i| self.pvcs[i].link.clone())
            .collect();
        let parsed = |list: &[Held], places: Vec<usize>| -> Result<Vec<Value>, String> {
            places.into_iter().map(|i| parse(&list[i])).collect()
        };
        let numbers = places(&self.at.vms, keys);
        Ok(Slice {
            vms: parsed(&self.vms, numbers.clone())?,
            numbers,
            kubevirts: self.shared.kubevirts.clone(),
            instancetypes: self.shared.instancetypes.clone(),
            pvcs: parsed(&self.pvcs, claims)?,
            nodes: self.shared.nodes.clone(),
            vmis: parsed(&self.vmis, places(&self.at.vmis, keys))?,
            pods: parsed(&self.pods, places(&self.at.pods, keys))?,
            persistent_volumes: parsed(
                &self.persistent_volumes,
                places(&self.at.persistent_volumes, &bound),
            )?,
            ..Slice::default()
        })
    }

    /// The slices of `keys` (sorted), `size` keys each.
    pub fn slices<'s>(
        &'s self,
        keys: &'s [Key],
        size: usize,
    ) -> impl Iterator<Item = Result<Slice, String>> + 's {
        keys.chunks(size.max(1))
            .map(|chunk| self.slice(&chunk.iter().cloned().collect()))
    }

    /// What the input lacks, in words (never guessed).
    pub fn missing(&self) -> Vec<String> {
        super::slice::missing(
            !self.vmis.is_empty(),
            !self.pods.is_empty(),
            (!self.longhorn_volumes.is_empty(), !self.replicas.is_empty()),
        )
    }

    /// Running VMIs and bound claims without the PersistentVolumes they are bound to: R10 is
    /// not checked.
    pub fn missing_disks(&self) -> Option<String> {
        let bound = self.pvcs.iter().any(|c| c.link.is_some());
        super::slice::missing_disks(
            !self.vmis.is_empty(),
            bound,
            !self.persistent_volumes.is_empty(),
        )
    }
}

/// Parsed again: it was read once already, so only memory can fail here.
pub(super) fn parse(held: &Held) -> Result<Value, String> {
    serde_json::from_str(held.text.get()).map_err(|e| format!("{}/{}: {e}", held.key.0, held.key.1))
}

/// Where each object of `list` is, by `of` it (objects `of` gives nothing for are left out).
fn positions<K: Hash + Eq>(
    list: &[Held],
    of: impl Fn(&Held) -> Option<K>,
) -> HashMap<K, Vec<usize>> {
    let mut at: HashMap<K, Vec<usize>> = HashMap::new();
    for (place, held) in list.iter().enumerate() {
        if let Some(key) = of(held) {
            at.entry(key).or_default().push(place);
        }
    }
    at
}

/// The places of the objects of `wanted`, in reading order, each once.
fn places<'k, K: Hash + Eq + 'k>(
    at: &HashMap<K, Vec<usize>>,
    wanted: impl IntoIterator<Item = &'k K>,
) -> Vec<usize> {
    let mut found: Vec<usize> = wanted
        .into_iter()
        .filter_map(|key| at.get(key))
        .flatten()
        .copied()
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

fn sorted_keys(list: &[Held]) -> Vec<Key> {
    let keys: BTreeSet<&Key> = list.iter().map(|h| &h.key).collect();
    keys.into_iter().cloned().collect()
}

/// The VMIs a Longhorn volume names as its workloads.
fn workloads(volume: &Value) -> Vec<Key> {
    let namespace = volume
        .text_at("/status/kubernetesStatus/namespace")
        .unwrap_or_default();
    volume
        .pointer("/status/kubernetesStatus/workloadsStatus")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|w| w.get("workloadName").and_then(Value::as_str))
        .map(|name| (namespace_or_default(namespace), name.to_owned()))
        .collect()
}

fn namespace_or_default(namespace: &str) -> String {
    if namespace.is_empty() {
        "default".to_owned()
    } else {
        namespace.to_owned()
    }
}
