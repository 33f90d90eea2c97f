//! L2: what an UPDATE changes in a running VM's `spec.template.spec`, field by field, in the
//! kinds KubeVirt's VM controller tells apart (v1.9.0 `pkg/virt-controller/watch/vm/vm.go`
//! `syncRestartRequired` 2989-3064: it copies the live-updatable fields over and compares what
//! is left). What is left, compared as Kubernetes' semantic equality does (`null`, absent, `[]`
//! and `{}` are equal), is a non-live change.

use super::json::{at, differing, get, items, number, same, set, text};
use crate::object::view::Scalar;

use crate::configuration::{Configuration, Rules};

/// One change of the template spec.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Change {
    /// `domain.cpu.sockets` (unset is 1).
    Sockets { from: u64, to: u64 },
    /// `domain.memory.guest`, both set.
    Memory { from: String, to: String },
    /// `nodeSelector`, `affinity` or `tolerations`.
    Scheduling(&'static str),
    /// A hotpluggable volume added or removed, with its disk.
    VolumeHotplug(String),
    /// A volume's claim replaced under `updateVolumesStrategy: Migration`.
    VolumeMigration {
        volume: String,
        from: String,
        to: String,
    },
    /// An interface plugged (`bridge`, `sriov`) or unplugged (`state: absent`).
    Nic {
        name: String,
        what: &'static str,
        migration: bool,
    },
    /// A network's `multus.networkName` changed (live from v1.9, or v1.8 with `LiveUpdateNADRef`).
    NetworkAttachment {
        name: String,
        from: String,
        to: String,
    },
    /// Every other changed member, by path below `spec.template.spec`.
    NonLive(Vec<String>),
}

/// What an UPDATE changes, from the old and the new template spec; `volume_migration` is the
/// VM's `spec.updateVolumesStrategy: Migration`.
pub(super) fn of<'a>(
    old: &Scalar<'a>,
    new: &Scalar<'a>,
    volume_migration: bool,
    config: &Configuration,
    rules: Rules,
) -> Vec<Change> {
    let mut old = old.clone();
    let mut changes = Vec::new();
    sockets(&mut old, new, &mut changes);
    memory(&mut old, new, &mut changes);
    for field in ["nodeSelector", "affinity", "tolerations"] {
        if copy(&mut old, new, &[field]) {
            changes.push(Change::Scheduling(field));
        }
    }
    volumes(&mut old, new, volume_migration, &mut changes);
    let nad_live =
        rules >= Rules::V1_9 || (rules == Rules::V1_8 && config.gate("LiveUpdateNADRef"));
    networks(&mut old, new, nad_live, &mut changes);
    let mut paths = Vec::new();
    differing("", Some(&old), Some(new), &mut paths);
    if !paths.is_empty() {
        changes.push(Change::NonLive(paths));
    }
    changes
}

/// Copies `path` of `new` into `old`; whether the two differed.
fn copy<'a>(old: &mut Scalar<'a>, new: &Scalar<'a>, path: &[&str]) -> bool {
    let was = at(old, path).cloned();
    let now = at(new, path).cloned();
    if same(was.as_ref(), now.as_ref()) {
        return false;
    }
    set(old, path, now);
    true
}

const SOCKETS: [&str; 3] = ["domain", "cpu", "sockets"];
const GUEST: [&str; 3] = ["domain", "memory", "guest"];

/// `domain.cpu.sockets`: unset is one socket.
fn sockets<'a>(old: &mut Scalar<'a>, new: &Scalar<'a>, changes: &mut Vec<Change>) {
    let count = |v: &Scalar| match at(v, &SOCKETS) {
        None | Some(Scalar::Null) => Some(1),
        Some(_) => number(v, &SOCKETS),
    };
    if let (Some(from), Some(to)) = (count(old), count(new))
        && from != to
    {
        copy(old, new, &SOCKETS);
        changes.push(Change::Sockets { from, to });
    }
}

/// `domain.memory.guest`, when both set: equal quantities (`4Gi`, `4096Mi`) are no change.
fn memory<'a>(old: &mut Scalar<'a>, new: &Scalar<'a>, changes: &mut Vec<Change>) {
    let guest = |v: &Scalar| text(v, &GUEST).map(str::to_owned);
    let (Some(from), Some(to)) = (guest(old), guest(new)) else {
        return;
    };
    let (Some(a), Some(b)) = (super::quantity::bytes(&from), super::quantity::bytes(&to)) else {
        return;
    };
    copy(old, new, &GUEST);
    if a != b {
        changes.push(Change::Memory { from, to });
    }
}

/// Items of a named list (`volumes`, `disks`, `interfaces`, `networks`) by name.
fn named<'v, 'a>(value: &'v Scalar<'a>, path: &[&str]) -> Vec<(&'v str, &'v Scalar<'a>)> {
    items(value, path)
        .iter()
        .filter_map(|item| Some((get(item, "name")?.as_str()?, item)))
        .collect()
}

const VOLUMES: [&str; 1] = ["volumes"];
const DISKS: [&str; 3] = ["domain", "devices", "disks"];

/// The claim a volume names (`persistentVolumeClaim.claimName`, `dataVolume.name`), and whether it
/// is hotpluggable.
fn claim<'v>(volume: &'v Scalar) -> Option<(&'v str, bool)> {
    let (source, key) = match (
        get(volume, "persistentVolumeClaim"),
        get(volume, "dataVolume"),
    ) {
        (Some(pvc), _) => (pvc, "claimName"),
        (None, Some(dv)) => (dv, "name"),
        _ => return None,
    };
    let hotpluggable = get(source, "hotpluggable") == Some(&Scalar::Bool(true));
    Some((get(source, key)?.as_str()?, hotpluggable))
}

/// `volumes` and `disks` (`validLiveUpdateVolumes` / `validLiveUpdateDisks`, vm.go:2902-2935):
/// live when every difference is a hotpluggable volume added or removed with its disk, or a
/// claim replaced under `updateVolumesStrategy: Migration`; else both lists stay for the
/// non-live comparison.
fn volumes<'a>(old: &mut Scalar<'a>, new: &Scalar<'a>, migration: bool, changes: &mut Vec<Change>) {
    let (before, after) = (named(old, &VOLUMES), named(new, &VOLUMES));
    let mut found = Vec::new();
    let mut hotplugged = Vec::new();
    for (name, volume) in &after {
        match before.iter().find(|(n, _)| n == name) {
            Some((_, was)) if same(Some(was), Some(volume)) => {}
            Some((_, was)) => {
                let replaced = match (claim(was), claim(volume)) {
                    (Some((from, _)), Some((to, _))) if migration => {
                        let mut copy = (*was).clone();
                        set(
                            &mut copy,
                            &[source_key(volume), claim_key(volume)],
                            Some(Scalar::str(to.to_owned())),
                        );
                        same(Some(&copy), Some(volume)).then(|| (from.to_owned(), to.to_owned()))
                    }
                    _ => None,
                };
                let Some((from, to)) = replaced else { return };
                found.push(Change::VolumeMigration {
                    volume: (*name).to_owned(),
                    from,
                    to,
                });
            }
            None if claim(volume).is_some_and(|(_, hot)| hot) => hotplugged.push(*name),
            None => return,
        }
    }
    for (name, volume) in &before {
        if !after.iter().any(|(n, _)| n == name) {
            if !claim(volume).is_some_and(|(_, hot)| hot) {
                return;
            }
            hotplugged.push(*name);
        }
    }
    // The disks may differ only by the hotplugged volumes' own.
    let disks = |v: &Scalar<'a>| -> Vec<Scalar<'a>> {
        named(v, &DISKS)
            .into_iter()
            .filter(|(n, _)| !hotplugged.contains(n))
            .map(|(_, d)| d.clone())
            .collect()
    };
    if disks(old) != disks(new) {
        return;
    }
    found.extend(
        hotplugged
            .iter()
            .map(|n| Change::VolumeHotplug((*n).to_owned())),
    );
    copy(old, new, &VOLUMES);
    copy(old, new, &DISKS);
    changes.extend(found);
}

fn source_key(volume: &Scalar) -> &'static str {
    match get(volume, "persistentVolumeClaim") {
        Some(_) => "persistentVolumeClaim",
        None => "dataVolume",
    }
}

fn claim_key(volume: &Scalar) -> &'static str {
    match get(volume, "persistentVolumeClaim") {
        Some(_) => "claimName",
        None => "name",
    }
}

const INTERFACES: [&str; 3] = ["domain", "devices", "interfaces"];
const NETWORKS: [&str; 1] = ["networks"];

/// `interfaces` and `networks` (`pkg/network/vmliveupdate/restart.go`,
/// `pkg/network/migration/evaluator.go`): live when every difference is an interface plugged
/// with a new multus network (`bridge`: no migration; `sriov`: `MigrationRequired`), an
/// interface set to `state: absent` (unplugged, `MigrationRequired`), or, where `nad_live`, a
/// network's `multus.networkName` changed (`MigrationRequired`).
fn networks<'a>(old: &mut Scalar<'a>, new: &Scalar<'a>, nad_live: bool, changes: &mut Vec<Change>) {
    let Some(mut found) = interfaces(old, new) else {
        return;
    };
    let Some(attachments) = attachments(old, new, nad_live, &found) else {
        return;
    };
    found.extend(attachments);
    copy(old, new, &INTERFACES);
    copy(old, new, &NETWORKS);
    changes.extend(found);
}

/// The multus network a network attaches (`multus.networkName`).
fn nad(network: &Scalar) -> Option<String> {
    Some(text(network, &["multus", "networkName"])?.to_owned())
}

/// The interfaces plugged or unplugged; `None` when any other interface changed.
fn interfaces(old: &Scalar, new: &Scalar) -> Option<Vec<Change>> {
    let (nets_before, nets_after) = (named(old, &NETWORKS), named(new, &NETWORKS));
    let (before, after) = (named(old, &INTERFACES), named(new, &INTERFACES));
    if before
        .iter()
        .any(|(n, _)| !after.iter().any(|(m, _)| m == n))
    {
        return None;
    }
    let mut found = Vec::new();
    for (name, iface) in &after {
        let name = (*name).to_owned();
        match before.iter().find(|(n, _)| *n == name) {
            Some((_, was)) if same(Some(was), Some(iface)) => {}
            Some((_, was)) => {
                let mut unplugged = (*was).clone();
                set(&mut unplugged, &["state"], Some(Scalar::str("absent")));
                if !same(Some(&unplugged), Some(iface)) {
                    return None;
                }
                found.push(Change::Nic {
                    name,
                    what: "unplugged",
                    migration: true,
                });
            }
            None => {
                let what = match (get(iface, "bridge"), get(iface, "sriov")) {
                    (Some(_), None) => "plugged (bridge)",
                    (None, Some(_)) => "plugged (sriov)",
                    _ => return None,
                };
                let network = nets_after.iter().find(|(n, _)| *n == name).map(|(_, n)| *n);
                let fresh = !nets_before.iter().any(|(n, _)| *n == name);
                if !fresh || network.and_then(nad).is_none() {
                    return None;
                }
                found.push(Change::Nic {
                    name,
                    what,
                    migration: what.ends_with("(sriov)"),
                });
            }
        }
    }
    Some(found)
}

/// The networks whose multus network changed; `None` when a network changed otherwise, was
/// removed, or was added without a plugged interface.
fn attachments(
    old: &Scalar,
    new: &Scalar,
    nad_live: bool,
    plugged: &[Change],
) -> Option<Vec<Change>> {
    let (before, after) = (named(old, &NETWORKS), named(new, &NETWORKS));
    let plugged = |name: &str| {
        plugged
            .iter()
            .any(|c| matches!(c, Change::Nic { name: n, .. } if n == name))
    };
    if after
        .iter()
        .any(|(n, _)| !before.iter().any(|(m, _)| m == n) && !plugged(n))
    {
        return None;
    }
    let mut found = Vec::new();
    for (name, network) in &before {
        let (_, now) = after.iter().find(|(n, _)| n == name)?;
        if same(Some(network), Some(now)) {
            continue;
        }
        let (from, to) = (nad(network)?, nad(now)?);
        let mut moved = (*network).clone();
        set(
            &mut moved,
            &["multus", "networkName"],
            Some(Scalar::str(to.clone())),
        );
        if !nad_live || !same(Some(&moved), Some(now)) {
            return None;
        }
        found.push(Change::NetworkAttachment {
            name: (*name).to_owned(),
            from,
            to,
        });
    }
    Some(found)
}
