//! The engines that come from Python wheels: a venv (`SCHEMABRAIN_ENGINES_VENV`,
//! default `~/.cache/schemabrain-engines-venv`) with `pyspark` (whose jars
//! hold a Spark Connect server) and the `adbc-driver-sqlite` and
//! `adbc-driver-postgresql` wheels (whose shared libraries are ADBC
//! drivers), created here when missing, as the MCP client's venv is.
//!
//! One local Spark Connect server serves the whole test binary: started on
//! first use from the venv (`spark-submit … SparkConnectServer`, bound to
//! 127.0.0.1 on a free port, in-memory catalog), the demo warehouse
//! exported to Parquet and registered as tables of database `main`, and
//! stopped by its PID when the binary exits (`atexit`).
//!
//! A venv, Java, server or driver that cannot be had fails the test, unless
//! `SCHEMABRAIN_SKIP_SERVERS=1` asks for skipping (not under `CI=true`):
//! see `common::unavailable`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use schemabrain::engine::{self, Engine};

pub const PYSPARK: &str = "pyspark==4.3.0";
pub const ADBC_SQLITE: &str = "adbc-driver-sqlite==1.13.0";
pub const ADBC_POSTGRES: &str = "adbc-driver-postgresql==1.13.0";

/// A missing engine: a failure unless skipping was asked for.
pub fn unavailable<T>(what: &str, why: &str) -> Option<T> {
    crate::common::unavailable(what, why)
}

fn venv_dir() -> Option<PathBuf> {
    std::env::var_os("SCHEMABRAIN_ENGINES_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/schemabrain-engines-venv")))
}

/// The venv's site-packages, the venv created and the wheels installed when
/// needed (once per test binary).
pub fn site_packages() -> Result<PathBuf, String> {
    static SITE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    SITE.get_or_init(|| {
        let venv = venv_dir().ok_or("no HOME and no SCHEMABRAIN_ENGINES_VENV")?;
        let python = venv.join("bin/python");
        let wanted = [PYSPARK, ADBC_SQLITE, ADBC_POSTGRES];
        let pairs = wanted.iter().map(|w| { let (n, v) = w.split_once("==").unwrap_or((w, "")); format!("('{n}', '{v}')") }).collect::<Vec<_>>().join(", ");
        let check = format!("import importlib.metadata as m, sys, sysconfig\nif any(m.version(n) != v for n, v in [{pairs}]): sys.exit(1)\nprint(sysconfig.get_paths()['purelib'])");
        let probe = |p: &Path| Command::new(p).args(["-c", &check]).output().ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        if let Some(site) = probe(&python) {
            return Ok(PathBuf::from(site));
        }
        let out = Command::new("python3").args(["-m", "venv"]).arg(&venv).output().map_err(|e| format!("python3 -m venv: {e}"))?;
        if !out.status.success() {
            return Err(format!("python3 -m venv failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let out = Command::new(venv.join("bin/pip")).args(["install", "--quiet"]).args(wanted).output().map_err(|e| format!("pip: {e}"))?;
        if !out.status.success() {
            return Err(format!("pip install {} failed: {}", wanted.join(" "), String::from_utf8_lossy(&out.stderr)));
        }
        probe(&python).map(PathBuf::from).ok_or_else(|| "the venv still lacks the wheels after pip install".to_string())
    })
    .clone()
}

/// The shared library of an ADBC driver wheel (`sqlite`, `postgresql`).
pub fn adbc_driver(name: &str) -> Option<PathBuf> {
    let site = match site_packages() {
        Ok(s) => s,
        Err(why) => return unavailable(&format!("the ADBC {name} driver"), &why),
    };
    let lib = site.join(format!("adbc_driver_{name}/libadbc_driver_{name}.so"));
    if lib.is_file() {
        Some(lib)
    } else {
        unavailable(&format!("the ADBC {name} driver"), &format!("{} is missing", lib.display()))
    }
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The running server: its URL, and the JVM's PID.
pub struct SparkServer {
    pub url: String,
    pub pid: i32,
}

static SERVER_PID: AtomicI32 = AtomicI32::new(0);

extern "C" fn stop_server() {
    let pid = SERVER_PID.swap(0, Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: a plain kill(2) of the process this binary started.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// The binary's Spark Connect server, held by one test at a time: a test
/// that watches the server's CPU after an interrupt must not see another
/// test's queries there. Dereferences to the server.
pub struct SparkUse {
    server: &'static SparkServer,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl std::ops::Deref for SparkUse {
    type Target = SparkServer;
    fn deref(&self) -> &SparkServer {
        self.server
    }
}

/// The binary's Spark Connect server, started on first use, once the tests
/// before have let go of it (`None`: skipped).
pub fn spark() -> Option<SparkUse> {
    static SERVER: OnceLock<Result<SparkServer, String>> = OnceLock::new();
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match SERVER.get_or_init(start_spark) {
        Ok(server) => Some(SparkUse { server, _turn: turn }),
        Err(why) => unavailable("the Spark Connect server", why),
    }
}

fn start_spark() -> Result<SparkServer, String> {
    let site = site_packages()?;
    let spark_home = site.join("pyspark");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("spark"));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let port = free_port();
    let log = std::fs::File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let child = Command::new(spark_home.join("bin/spark-submit"))
        .env("SPARK_HOME", &spark_home)
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .env("SPARK_LOCAL_DIRS", dir.join("local"))
        .current_dir(&dir)
        .args(["--class", "org.apache.spark.sql.connect.service.SparkConnectServer", "--name", "schemabrain-tests", "--master", "local[2]", "--driver-memory", "1g"])
        .args(["--conf", &format!("spark.connect.grpc.binding.port={port}")])
        .args(["--conf", "spark.connect.grpc.binding.address=127.0.0.1"])
        .args(["--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1"])
        .args(["--conf", "spark.ui.enabled=false", "--conf", "spark.sql.catalogImplementation=in-memory"])
        .args(["--conf", &format!("spark.sql.warehouse.dir={}", dir.join("warehouse").display())])
        .args(["--conf", "spark.sql.shuffle.partitions=4"])
        .arg("spark-internal")
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start spark-submit (is Java 17 installed?): {e}"))?;
    // spark-submit execs the JVM: this PID is the server's.
    let pid = child.id() as i32;
    SERVER_PID.store(pid, Ordering::SeqCst);
    // SAFETY: registers a plain extern "C" fn with no captured state.
    unsafe {
        libc::atexit(stop_server);
    }
    let url = format!("sc://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("no server on port {port} after 180s; see {}", dir.join("server.log").display()));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!("Spark Connect server (pid {pid}) listening on {url} after {:?}", started.elapsed());
    let lake = crate::engines_datafusion::demo_files("parquet").strip_prefix("parquet:").map(PathBuf::from).unwrap_or_default();
    register_parquet(&url, "main", &lake)?;
    Ok(SparkServer { url, pid })
}

/// Registers every `*.parquet` file of `dir` as a table of `database` (created when missing).
pub fn register_parquet(url: &str, database: &str, dir: &Path) -> Result<(), String> {
    let writer = engine::open_for(url, true).map_err(|e| e.to_string())?;
    let mut statements = vec![format!("CREATE DATABASE IF NOT EXISTS `{database}`")];
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "parquet")).collect();
    files.sort();
    for f in files {
        let table = f.file_stem().unwrap().to_string_lossy().to_string();
        statements.push(format!("CREATE TABLE IF NOT EXISTS `{database}`.`{table}` USING parquet LOCATION '{}'", f.display()));
    }
    writer.write(&statements, Duration::from_secs(120), &engine::Cancel::never()).map_err(|e| e.to_string())
}

/// CPU seconds the process has used (user + system), from /proc.
pub fn cpu_seconds(pid: i32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat (utime, stime) are 12 and 13 after the name.
    let ticks: f64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<f64>().ok()).sum();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks / hz.max(1.0)
}

/// Opens `url`, panicking with the error.
pub fn open(url: &str) -> Box<dyn Engine> {
    engine::open(url).unwrap_or_else(|e| panic!("{url}: {e}"))
}
