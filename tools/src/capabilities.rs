//! The host capabilities policy-server knows: what the metadata may declare and what the
//! module's imports are matched against.

/// Host capabilities policy-server knows, as `namespace/operation` paths.
pub const HOST_CAPABILITIES: [&str; 11] = [
    "oci/v1/verify",
    "oci/v1/manifest_digest",
    "oci/v1/oci_manifest",
    "oci/v1/oci_manifest_config",
    "oci/v2/verify",
    "net/v1/dns_lookup_host",
    "crypto/v1/is_certificate_trusted",
    "kubernetes/list_resources_by_namespace",
    "kubernetes/list_resources_all",
    "kubernetes/get_resource",
    "kubernetes/can_i",
];
