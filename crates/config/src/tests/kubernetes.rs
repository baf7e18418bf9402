//! `[executor.kubernetes]`: every key resolved, and each bad value refused
//! with its key and the fix.

use super::{parse, refusal};
use crate::resolve::{self, Env, RunFlags};
use crate::SettingsError;

fn kubernetes(table: &str) -> Result<crate::ExecutorSettings, SettingsError> {
    let text = format!("[executor]\nkind = \"kubernetes\"\n[executor.kubernetes]\n{table}");
    resolve::executor(&parse(&text).executor)
}

fn refused(table: &str) -> String {
    match kubernetes(table) {
        Ok(s) => panic!("{table} resolved: {s:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_kubernetes_table_resolves_with_every_key() {
    let s = kubernetes(
        "image = \"reg.example/pw:1\"\nnamespace = \"agents\"\nruntime_class = \"gvisor\"\n\
         secrets = [\"model-keys\"]\nnode_selector = { \"pool\" = \"agents\", \"example.com/disk\" = \"\" }\n\
         resources = { cpu = \"500m\", memory = \"4Gi\", ephemeral_storage = \"1.5e3\" }\n\
         kubeconfig = \"/etc/pw/kubeconfig\"\n",
    )
    .unwrap();
    let crate::ExecutorSettings::Kubernetes(k) = s else {
        panic!("{s:?}")
    };
    assert_eq!(k.image, "reg.example/pw:1");
    assert_eq!(k.namespace.as_deref(), Some("agents"));
    assert_eq!(k.runtime_class.as_deref(), Some("gvisor"));
    assert_eq!(k.secrets, ["model-keys"]);
    assert_eq!(
        k.kubeconfig.as_deref(),
        Some(std::path::Path::new("/etc/pw/kubeconfig"))
    );
    assert_eq!(
        k.command,
        ["planwright", "worker", "--cache", "/planwright/cache"]
    );
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        k.resources,
        pairs(&[
            ("cpu", "500m"),
            ("memory", "4Gi"),
            ("ephemeral-storage", "1.5e3")
        ])
    );
    let selector: Vec<(&str, &str)> = k
        .node_selector
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(selector, [("example.com/disk", ""), ("pool", "agents")]);
}

#[test]
fn kubernetes_needs_its_table_and_an_image() {
    let text = "[executor]\nkind = \"kubernetes\"\n";
    let e = resolve::executor(&parse(text).executor).unwrap_err();
    assert!(
        e.to_string().contains("needs `[executor.kubernetes] image"),
        "{e}"
    );
    assert!(refused("namespace = \"a\"\n").contains("`[executor.kubernetes] image` is missing"));
    assert!(refused("image = \"a b\"\n").contains("has a space"));
    let text = "[executor]\nkind = \"process\"\n[executor.kubernetes]\nimage = \"i\"\n";
    let e = resolve::executor(&parse(text).executor).unwrap_err();
    assert!(
        e.to_string()
            .contains("`[executor.kubernetes]` is for `kind = \"kubernetes\"`"),
        "{e}"
    );
}

#[test]
fn kubernetes_names_are_checked_by_kubernetes_rules() {
    let img = "image = \"i\"\n";
    for (table, says) in [
        (
            "namespace = \"Agents\"",
            "`[executor.kubernetes] namespace = \"Agents\"` is not a Kubernetes name",
        ),
        ("namespace = \"a.b\"", "namespace = \"a.b\"` is not"),
        (
            "runtime_class = \"-gvisor\"",
            "kubernetes] runtime_class` names `-gvisor`",
        ),
        (
            "secrets = [\"ok\", \"Bad_Name\"]",
            "kubernetes] secrets` names `Bad_Name`",
        ),
        (
            "node_selector = { \"a/b/c\" = \"x\" }",
            "the key `a/b/c`, which is not a label key",
        ),
        (
            "node_selector = { \"pool\" = \"a b\" }",
            "`[executor.kubernetes] node_selector.pool = \"a b\"` is not a label value",
        ),
        (
            "resources = { cpu = \"two\" }",
            "`[executor.kubernetes] resources.cpu = \"two\"` is not a Kubernetes quantity",
        ),
        (
            "resources = { memory = \"4GB\" }",
            "resources.memory = \"4GB\"` is not",
        ),
        (
            "resources = { memory = \"1.\" }",
            "resources.memory = \"1.\"` is not",
        ),
    ] {
        let e = refused(&format!("{img}{table}\n"));
        assert!(e.contains(says), "{table}: {e}");
    }
    let text = "[executor]\nkind = \"kubernetes\"\n[executor.kubernetes]\nsecret = [\"x\"]\n";
    let e = refusal(text).to_string();
    assert!(e.contains("secret"), "{e}");
}

#[test]
fn the_pods_deadline_counts_from_the_runs_agent_limit() {
    let text = "[agent]\ntimeout_secs = 90\n[executor]\nkind = \"kubernetes\"\n[executor.kubernetes]\nimage = \"i\"\n";
    let flags = RunFlags {
        plan: "plan.json".into(),
        ..RunFlags::default()
    };
    let s = resolve::run(flags, &parse(text), &Env::default()).unwrap();
    let crate::ExecutorSettings::Kubernetes(k) = s.executor else {
        panic!("{:?}", s.executor)
    };
    assert_eq!(k.agent_timeout, Some(std::time::Duration::from_secs(90)));
}
