//! `docs/settings.md`'s reference is the settings table itself: every field with its flag, its
//! key in `settings.json`, its default, the systems it exists on and its help. The test fails
//! when they differ; `LIDGUARD_BLESS=1` writes the table's version into the page.
#![allow(
    clippy::disallowed_methods,
    reason = "a test that reads and blesses a documentation page"
)]

use lidguard_core::settings::{FIELDS, Os, Settings};

const START: &str =
    "<!-- settings reference: generated from the settings table; do not edit by hand -->";
const END: &str = "<!-- end of the settings reference -->";

fn reference() -> String {
    let mut out = String::from(
        "| `lidguard settings` | `settings.json` | default | on | what it does |\n\
         | --- | --- | --- | --- | --- |\n",
    );
    for spec in FIELDS {
        let os = [Os::Linux, Os::MacOs, Os::Windows]
            .into_iter()
            .find(|os| spec.applies_to(*os))
            .expect("every field exists somewhere");
        let default = Settings::defaults_for(os)
            .get_field(spec.flag)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "off".to_owned());
        let systems = if spec.platforms.len() == 3 {
            "all".to_owned()
        } else {
            spec.platforms
                .iter()
                .map(|os| os.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mcp = if spec.user_only() {
            " Refused from MCP."
        } else {
            ""
        };
        out.push_str(&format!(
            "| `--{} {}` | `{}` | `{}` | {} | {}{} |\n",
            spec.flag,
            spec.value_hint.replace('|', "\\|"),
            spec.json_key,
            default.replace('|', "\\|"),
            systems,
            spec.help.replace('|', "\\|"),
            mcp
        ));
    }
    out
}

#[test]
fn the_settings_reference_is_the_settings_table() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/settings.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let start = page.find(START).expect("the start marker") + START.len();
    let end = page.find(END).expect("the end marker");
    let want = format!("\n{}", reference());
    if std::env::var_os("LIDGUARD_BLESS").is_some() {
        let new = format!("{}{want}{}", &page[..start], &page[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert!(
        page[start..end] == want,
        "docs/settings.md differs from the settings table; run \
         `LIDGUARD_BLESS=1 cargo test -p lidguard-core --test settings_doc` and review"
    );
}
