//! A real PostgreSQL server for the tests: Debian's binaries (`make setup`
//! installs them), a cluster shared by the test process under
//! `target/test-postgres/<test binary>` (or one of a test's own, [`private`],
//! for a test that stops it), on a free loopback port, with trust
//! authentication over TLS only (`hostssl` in `pg_hba.conf`: a connection
//! without TLS is refused). The server's certificate (for `localhost` and
//! `127.0.0.1`) is signed by a CA the test process makes ([`ca_file`]). It stops
//! when the test process ends (the parent-death signal), and each test gets a
//! database of its own, named by a `sslmode=verify-full` URL.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::host::root;

/// A running server: its port and the CA that signed its certificate.
pub struct Server {
    port: u16,
    ca_file: PathBuf,
    /// The postmaster's process id, for [`Server::stop`].
    pid: u32,
}

static SERVER: OnceLock<Server> = OnceLock::new();

/// The directory of PostgreSQL's server binaries (the newest installed).
fn bin_dir() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| entries.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    versions.retain(|dir| dir.join("postgres").exists());
    versions.sort_by_key(|dir| {
        dir.parent()
            .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
            .unwrap_or(0)
    });
    versions.pop().unwrap_or_else(|| {
        panic!("PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/postgres): run `make setup`, which installs Debian's postgresql package")
    })
}

/// PostgreSQL refuses to run as root: as root, the server runs as `postgres`.
fn run_as() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let id = |flag: &str| -> u32 {
        let out = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .expect("running id");
        assert!(
            out.status.success(),
            "running as root needs the `postgres` user, which Debian's postgresql package creates: run `make setup`"
        );
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    Some((id("-u"), id("-g")))
}

fn command(program: &Path, user: Option<(u32, u32)>) -> Command {
    use std::os::unix::process::CommandExt as _;
    let mut command = Command::new(program);
    if let Some((uid, gid)) = user {
        command.uid(uid).gid(gid);
    }
    command
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The name of the test binary, without cargo's hash.
fn binary_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            let stem = exe.file_stem()?.to_string_lossy().into_owned();
            Some(
                stem.rsplit_once('-')
                    .map_or(stem.clone(), |(name, _)| name.to_owned()),
            )
        })
        .unwrap_or_else(|| "tests".into())
}

/// Starts a server in `target/test-postgres/<name>` (emptied first).
fn start(name: &str) -> Server {
    let bin = bin_dir();
    let user = run_as();
    let dir = root().join("target/test-postgres").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
    }
    let init = command(&bin.join("initdb"), user)
        .args(["-D"])
        .arg(&dir)
        .args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
        .stdout(Stdio::null())
        .output()
        .expect("running initdb");
    assert!(
        init.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    let ca_file = dir.with_extension("ca.pem");
    write_certificates(&dir, &ca_file, user);
    std::fs::write(
        dir.join("pg_hba.conf"),
        "# TLS only: a connection without it matches no line and is refused.\n\
         hostssl all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    let port = free_port();
    // The server is started from a thread that never ends: the parent-death
    // signal is sent when the thread that spawned the child exits.
    let (ready, started) = std::sync::mpsc::channel();
    let postgres = bin.join("postgres");
    let data = dir.clone();
    std::thread::spawn(move || {
        use std::os::unix::process::CommandExt as _;
        let log = std::fs::File::create(data.with_extension("log")).unwrap();
        let mut server = command(&postgres, user);
        server
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .args(["-c", "unix_socket_directories="])
            .args(["-c", "max_connections=200"])
            .args(["-c", "ssl=on"])
            .args(["-c", "ssl_cert_file=server.crt"])
            .args(["-c", "ssl_key_file=server.key"])
            .stdout(Stdio::null())
            .stderr(log);
        // SAFETY: prctl is async-signal-safe; it only sets this process's
        // parent-death signal (a fast shutdown), after the uid change.
        unsafe {
            server.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = server.spawn().expect("starting postgres");
        ready.send(child.id()).unwrap();
        // Waits as long as the server runs, which is as long as the tests do.
        let status = child.wait();
        eprintln!("the test PostgreSQL server ended early: {status:?}");
    });
    let pid = started.recv().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let probe = Command::new(bin.join("pg_isready"))
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-q"])
            .status()
            .expect("running pg_isready");
        if probe.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "PostgreSQL did not accept connections within 30 s; see {}",
            dir.with_extension("log").display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Server { port, ca_file, pid }
}

/// A new CA: its issuer (to sign with) and its certificate in PEM.
pub fn new_ca(name: &str) -> rcgen::CertifiedIssuer<'static, rcgen::KeyPair> {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    rcgen::CertifiedIssuer::self_signed(params, rcgen::KeyPair::generate().unwrap()).unwrap()
}

/// Writes a CA to `ca_file` and, into the data directory `dir`, the server's
/// certificate for `localhost` and `127.0.0.1` and its key (0600, owned by the
/// server's user, as PostgreSQL demands).
fn write_certificates(dir: &Path, ca_file: &Path, user: Option<(u32, u32)>) {
    use std::os::unix::fs::PermissionsExt as _;
    let ca = new_ca("toolhost test CA");
    std::fs::write(ca_file, ca.pem()).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params =
        rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "localhost");
    let certificate = params.signed_by(&key, &ca).unwrap();
    let (cert_path, key_path) = (dir.join("server.crt"), dir.join("server.key"));
    std::fs::write(&cert_path, certificate.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600)).unwrap();
    if let Some((uid, gid)) = user {
        for path in [&cert_path, &key_path] {
            std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
        }
    }
}

fn server() -> &'static Server {
    SERVER.get_or_init(|| start(&binary_name()))
}

/// The shared server, started on first use.
async fn shared() -> &'static Server {
    tokio::task::spawn_blocking(server).await.unwrap()
}

/// The CA (PEM) that signed the shared server's certificate: `store.ca_file`.
pub async fn ca_file() -> PathBuf {
    shared().await.ca_file.clone()
}

/// A new, empty database on the shared server: see [`Server::database`].
pub async fn database() -> String {
    shared().await.database().await
}

/// A server of the calling test's own, in `target/test-postgres/<name>`: for a
/// test that stops it, while the shared one goes on serving the others.
pub async fn private(name: &'static str) -> Server {
    tokio::task::spawn_blocking(move || start(name))
        .await
        .unwrap()
}

impl Server {
    /// The CA (PEM) that signed this server's certificate: `store.ca_file`.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }

    /// Stops the server (a fast shutdown: SIGINT) and waits until it no
    /// longer accepts connections.
    pub async fn stop(&self) {
        let (pid, port) = (self.pid, self.port);
        tokio::task::spawn_blocking(move || {
            // SAFETY: kill only sends a signal to the server this process started.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
            let deadline = Instant::now() + Duration::from_secs(30);
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                assert!(
                    Instant::now() < deadline,
                    "PostgreSQL still accepts connections 30 s after SIGINT"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        })
        .await
        .unwrap();
    }

    /// The URL of a new, empty database on this server, with
    /// `sslmode=verify-full`: connect with [`Server::ca_file`] as `store.ca_file`.
    pub async fn database(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let port = self.port;
        let name = format!(
            "t{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let admin = format!("postgres://postgres@127.0.0.1:{port}/postgres?sslmode=require");
        let (client, connection) = tokio_postgres::connect(&admin, connector(&self.ca_file))
            .await
            .expect("connecting to the test server");
        tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("creating a test database");
        format!("postgres://postgres@127.0.0.1:{port}/{name}?sslmode=verify-full")
    }
}

/// A TLS connector trusting `ca_file` only, for the tests' own connections.
pub fn connector(ca_file: &Path) -> tokio_postgres_rustls::MakeRustlsConnect {
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in rustls::pki_types::CertificateDer::pem_file_iter(ca_file).unwrap() {
        roots.add(certificate.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    tokio_postgres_rustls::MakeRustlsConnect::new(config)
}
