//! The npm packages, the pattern the agents themselves ship with: `lidguard`, whose
//! `bin/lidguard.js` runs the executable from the per-platform package npm installed as an
//! optional dependency (`@lidguard/linux-x64`, …, each with `os` and `cpu` set so npm installs
//! only the one that runs here). `npm i -g lidguard` compiles nothing and downloads nothing at
//! run time. Hook entries name `lidguard-hook` inside the platform package by its path, so an
//! event never starts Node.

use std::path::PathBuf;

use anyhow::Context;
use serde_json::json;

use crate::archive::{Entry, tar_gz};
use crate::{Built, Dist, file_name};

/// Writes the tarballs (what `npm pack` makes) into `target/dist/npm`; returns their paths.
pub(crate) fn write(dist: &Dist, built: &[Built]) -> anyhow::Result<Vec<PathBuf>> {
    let dir = dist.out.join("npm");
    std::fs::create_dir_all(&dir)?;
    let repository = env!("CARGO_PKG_REPOSITORY");
    let readme = std::fs::read(dist.root.join("README.md"))?;
    let mut tarballs = Vec::new();
    let mut platforms = serde_json::Map::new();
    for b in built {
        let name = b.target.npm_package();
        let (os, cpu) = b.target.npm_platform();
        let manifest = json!({
            "name": name,
            "version": dist.version,
            "description": format!("lidguard's executables for {os} {}", cpu.join(" and ")),
            "license": "MIT OR Apache-2.0",
            "repository": repository,
            "os": [os],
            "cpu": cpu,
            "files": ["bin"],
            "preferUnplugged": true,
        });
        let mut entries = vec![package_json(&manifest)?];
        for exe in &b.executables {
            entries.push(Entry {
                path: format!("package/bin/{}", file_name(exe)),
                bytes: std::fs::read(exe)
                    .with_context(|| format!("cannot read {}", exe.display()))?,
                executable: true,
            });
        }
        let tarball = dir.join(format!(
            "{}-{}.tgz",
            name.trim_start_matches('@').replace('/', "-"),
            dist.version
        ));
        std::fs::write(&tarball, tar_gz(&entries)?)?;
        tarballs.push(tarball);
        for arch in cpu {
            platforms.insert(format!("{os}-{arch}"), json!(name));
        }
    }
    let optional: serde_json::Map<_, _> = built
        .iter()
        .map(|b| (b.target.npm_package().to_owned(), json!(dist.version)))
        .collect();
    let manifest = json!({
        "name": "lidguard",
        "version": dist.version,
        "description": crate::DESCRIPTION,
        "license": "MIT OR Apache-2.0",
        "repository": repository,
        "bin": { "lidguard": "bin/lidguard.js" },
        "files": ["bin", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
        "engines": { "node": ">=18" },
        "optionalDependencies": optional,
    });
    let mut entries = vec![
        package_json(&manifest)?,
        Entry {
            path: "package/bin/lidguard.js".to_owned(),
            bytes: launcher(&serde_json::to_string_pretty(&platforms)?).into_bytes(),
            executable: true,
        },
        Entry {
            path: "package/README.md".to_owned(),
            bytes: readme,
            executable: false,
        },
    ];
    for name in ["LICENSE-MIT", "LICENSE-APACHE"] {
        entries.push(Entry {
            path: format!("package/{name}"),
            bytes: std::fs::read(dist.root.join(name))?,
            executable: false,
        });
    }
    let tarball = dir.join(format!("lidguard-{}.tgz", dist.version));
    std::fs::write(&tarball, tar_gz(&entries)?)?;
    tarballs.push(tarball);
    Ok(tarballs)
}

fn package_json(manifest: &serde_json::Value) -> anyhow::Result<Entry> {
    Ok(Entry {
        path: "package/package.json".to_owned(),
        bytes: format!("{}\n", serde_json::to_string_pretty(manifest)?).into_bytes(),
        executable: false,
    })
}

/// `bin/lidguard.js`: finds this platform's package and runs its `lidguard` with the same
/// arguments, standard streams and exit status.
fn launcher(platforms: &str) -> String {
    format!(
        r#"#!/usr/bin/env node
// Runs lidguard's executable from the package npm installed for this platform.
"use strict";
const {{ spawnSync }} = require("node:child_process");
const os = require("node:os");
const path = require("node:path");

const PLATFORMS = {platforms};
const key = `${{process.platform}}-${{process.arch}}`;
const name = PLATFORMS[key];
if (!name) {{
  console.error(`lidguard: no build for ${{key}}; builds exist for ${{Object.keys(PLATFORMS).join(", ")}}`);
  process.exit(1);
}}
let dir;
try {{
  dir = path.dirname(require.resolve(`${{name}}/package.json`));
}} catch {{
  console.error(
    `lidguard: the package ${{name}} is not installed (npm skipped an optional dependency); ` +
      "reinstall with `npm install -g lidguard` without --omit=optional"
  );
  process.exit(1);
}}
const exe = path.join(dir, "bin", process.platform === "win32" ? "lidguard.exe" : "lidguard");
const run = spawnSync(exe, process.argv.slice(2), {{ stdio: "inherit" }});
if (run.error) {{
  console.error(`lidguard: cannot run ${{exe}}: ${{run.error.message}}`);
  process.exit(1);
}}
if (run.signal) {{
  process.kill(process.pid, run.signal);
  process.exit(128 + (os.constants.signals[run.signal] || 0));
}}
process.exit(run.status ?? 1);
"#
    )
}
