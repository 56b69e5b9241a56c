#include "engine/eval/worker_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "thrown_message.h"

namespace hiera::engine::eval {
namespace {

using Argv = std::vector<std::string>;

const Argv kSshOptions{"-o", "BatchMode=yes", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3",
                       "-e", "none", "-T"};

Argv ssh_argv(Argv before, Argv after) {
  Argv argv = std::move(before);
  argv.insert(argv.end(), kSshOptions.begin(), kSshOptions.end());
  argv.insert(argv.end(), after.begin(), after.end());
  return argv;
}

TEST(WorkerSpecTest, KindsAreRecognisedByTheirPrefix) {
  EXPECT_EQ(worker_spec_kind("ssh://gpu1"), WorkerSpecKind::Ssh);
  EXPECT_EQ(worker_spec_kind("slurm"), WorkerSpecKind::Slurm);
  EXPECT_EQ(worker_spec_kind("slurm:gpu"), WorkerSpecKind::Slurm);
  EXPECT_EQ(worker_spec_kind("slurm,gres=gpu:2"), WorkerSpecKind::Slurm);
  EXPECT_EQ(worker_spec_kind("slurmx"), WorkerSpecKind::Command);
  EXPECT_EQ(worker_spec_kind("hiera worker --device 1"), WorkerSpecKind::Command);
  EXPECT_EQ(worker_spec_kind("ssh gpu1 hiera worker"), WorkerSpecKind::Command);
}

TEST(WorkerSpecTest, SshHostAlone) {
  const SshWorkerSpec spec = parse_ssh_worker("ssh://gpu1");
  EXPECT_EQ(spec.host, "gpu1");
  EXPECT_EQ(spec.user, "");
  EXPECT_FALSE(spec.port);
  EXPECT_EQ(spec.hiera, "hiera");
  EXPECT_EQ(spec.gpus, 0);
  EXPECT_EQ(ssh_worker_commands(spec, {"ssh"}),
            std::vector<Argv>{ssh_argv({"ssh"}, {"--", "gpu1", "exec hiera worker"})});
}

TEST(WorkerSpecTest, SshUserPortPathAndGpus) {
  const SshWorkerSpec spec = parse_ssh_worker("ssh://ann@10.0.0.7:2222/opt/hiera dev/bin/hiera?gpus=2");
  EXPECT_EQ(spec.user, "ann");
  EXPECT_EQ(spec.host, "10.0.0.7");
  EXPECT_EQ(spec.port, 2222);
  EXPECT_EQ(spec.hiera, "/opt/hiera dev/bin/hiera");
  EXPECT_EQ(spec.gpus, 2);
  const Argv base{"ssh", "-F", "/tmp/config"};
  EXPECT_EQ(ssh_worker_commands(spec, base),
            (std::vector<Argv>{
                ssh_argv(base, {"-p", "2222", "--", "ann@10.0.0.7", "exec '/opt/hiera dev/bin/hiera' worker --device 0"}),
                ssh_argv(base, {"-p", "2222", "--", "ann@10.0.0.7", "exec '/opt/hiera dev/bin/hiera' worker --device 1"})}));
}

TEST(WorkerSpecTest, SshIpv6) {
  const SshWorkerSpec spec = parse_ssh_worker("ssh://[::1]:22");
  EXPECT_EQ(spec.host, "::1");
  EXPECT_EQ(spec.port, 22);
}

TEST(WorkerSpecTest, BadSshSpecsSayWhatIsWrong) {
  using hiera::testing::thrown_message;
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://"); }),
            "--worker ssh://: no host (expected ssh://[user@]host[:port][/path/to/hiera])");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://h:0"); }), "--worker ssh://h:0: the port must be a number from 1 to 65535");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://h:x"); }), "--worker ssh://h:x: the port must be a number from 1 to 65535");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://h:"); }), "--worker ssh://h:: the port after ':' is empty");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://-oProxyCommand=x"); }),
            "--worker ssh://-oProxyCommand=x: a host cannot start with '-'");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://h/"); }),
            "--worker ssh://h/: the path after the host must name the remote hiera executable");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://h?gpus=0"); }),
            "--worker ssh://h?gpus=0: gpus must be a whole number from 1 to 64");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://h?device=1"); }),
            "--worker ssh://h?device=1: unknown option 'device=1' (known: gpus=N)");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://@h"); }), "--worker ssh://@h: the user before '@' is empty or has spaces");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_ssh_worker("ssh://[::1"); }), "--worker ssh://[::1: an IPv6 address needs its closing ']'");
}

TEST(WorkerSpecTest, ShellQuote) {
  EXPECT_EQ(shell_quote("/usr/bin/hiera"), "/usr/bin/hiera");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(WorkerSpecTest, SlurmDefaults) {
  const SlurmWorkerSpec spec = parse_slurm_worker("slurm");
  EXPECT_EQ(spec.partition, "");
  EXPECT_EQ(spec.gres, "");
  EXPECT_EQ(spec.gpus_per_node, 0);
  EXPECT_EQ(spec.nodes, 1);
  EXPECT_EQ(spec.workers, 1);
  EXPECT_EQ(spec.cpus_per_worker, 1);
  EXPECT_EQ(spec.job_id, "");
  EXPECT_EQ(spec.hiera, "");
  EXPECT_EQ(spec.memory, "");
}

TEST(WorkerSpecTest, SlurmOneWorkerPerAllocatedGpu) {
  const SlurmWorkerSpec spec = parse_slurm_worker("slurm:gpu,gres=gpu:h100:4,nodes=2,time=1:00:00,cpus=8");
  EXPECT_EQ(spec.partition, "gpu");
  EXPECT_EQ(spec.gres, "gpu:h100:4");
  EXPECT_EQ(spec.gpus_per_node, 4);
  EXPECT_EQ(spec.nodes, 2);
  EXPECT_EQ(spec.workers, 8);
  EXPECT_EQ(spec.cpus_per_worker, 8);
  EXPECT_EQ(spec.time_limit, "1:00:00");
}

TEST(WorkerSpecTest, SlurmExistingJobAndExplicitWorkers) {
  const SlurmWorkerSpec spec = parse_slurm_worker("slurm:jobid=123,workers=3,hiera=/shared/bin/hiera");
  EXPECT_EQ(spec.partition, "");
  EXPECT_EQ(spec.job_id, "123");
  EXPECT_EQ(spec.workers, 3);
  EXPECT_EQ(spec.hiera, "/shared/bin/hiera");
  EXPECT_EQ(parse_slurm_worker("slurm,gres=gpu:2").workers, 2);
  EXPECT_EQ(parse_slurm_worker("slurm:partition=debug").partition, "debug");
}

TEST(WorkerSpecTest, BadSlurmSpecsSayWhatIsWrong) {
  using hiera::testing::thrown_message;
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm,gpu"); }),
            "--worker slurm,gpu: 'gpu' is not KEY=VALUE (a partition comes first, after 'slurm:')");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm:a,b"); }),
            "--worker slurm:a,b: 'b' is not KEY=VALUE (a partition comes first, after 'slurm:')");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm:gres=gpu"); }),
            "--worker slurm:gres=gpu: gres must be gpu:N or gpu:TYPE:N (N from 1 to 64)");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm:gres=mps:2"); }),
            "--worker slurm:gres=mps:2: gres must be gpu:N or gpu:TYPE:N (N from 1 to 64)");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm:jobid=abc"); }),
            "--worker slurm:jobid=abc: jobid must be a Slurm job id (a number)");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm:workers=0"); }),
            "--worker slurm:workers=0: workers must be a whole number from 1 to 1024");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm:time="); }), "--worker slurm:time=: time needs a value without spaces");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm:qos=high"); }),
            "--worker slurm:qos=high: unknown option 'qos' (known: partition, gres, nodes, workers, cpus, mem, time, jobid, hiera)");
}

TEST(WorkerSpecTest, SlurmMemoryIsASlurmSizeKeptAsWritten) {
  EXPECT_EQ(parse_slurm_worker("slurm:gpu,gres=gpu:2,mem=64G").memory, "64G");
  EXPECT_EQ(parse_slurm_worker("slurm,mem=512").memory, "512");
  EXPECT_EQ(parse_slurm_worker("slurm,mem=16g").memory, "16g");
  EXPECT_EQ(parse_slurm_worker("slurm,mem=2T").memory, "2T");
  EXPECT_EQ(parse_slurm_worker("slurm,mem=0").memory, "0");  // Slurm's "all of each node's memory"
}

TEST(WorkerSpecTest, ABadSlurmMemoryNamesTheValue) {
  using hiera::testing::thrown_message;
  const std::string why = ": mem must be a size: digits with an optional K, M, G or T suffix (megabytes without), not ";
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm,mem=64GB"); }),
            "--worker slurm,mem=64GB" + why + "'64GB'");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm,mem=G"); }), "--worker slurm,mem=G" + why + "'G'");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm,mem=1.5G"); }),
            "--worker slurm,mem=1.5G" + why + "'1.5G'");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm,mem=-1"); }), "--worker slurm,mem=-1" + why + "'-1'");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm,mem=8P"); }), "--worker slurm,mem=8P" + why + "'8P'");
  EXPECT_EQ(thrown_message<std::invalid_argument>([] { parse_slurm_worker("slurm,mem="); }),
            "--worker slurm,mem=: mem needs a value without spaces");
}

}  // namespace
}  // namespace hiera::engine::eval
