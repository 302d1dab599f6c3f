// The table of every fio option name afasim knows: supported, ignored (with why) or refused
// (with why). docs/workloads.md lists them.
#include "workload/fio_job_internal.h"


namespace afasim::workload::fio_detail {

constexpr std::string_view kHostOnly = "host-side only; the simulated array does not see it";
constexpr std::string_view kEngine = "afasim is the I/O engine";
constexpr std::string_view kNoLogs = "logs are sampled at afasim's fixed 500 ms interval";
constexpr std::string_view kBuffers = "buffer contents are not simulated (no dedupe/compression)";
constexpr std::string_view kFiles = "volumes are block devices, not files";
constexpr std::string_view kOtherEngine =
    "an option of another fio I/O engine; afasim is the engine (block I/O to simulated volumes)";
constexpr std::string_view kZoned = "zoned block devices are not simulated";
constexpr std::string_view kReplay = "read_iolog replays each I/O as recorded; this is not simulated";

// Every option name afasim knows, with aliases: every option of fio 3.33 (`fio --cmdhelp=all`,
// each engine's `fio --enghelp=ENGINE`) is here. Anything else is "unknown option".
constexpr OptionDef kOptions[] = {
    {"name", Opt::kName, {}},
    {"description", Opt::kDescription, {}},
    {"rw", Opt::kRw, {}},
    {"readwrite", Opt::kRw, {}},
    {"rwmixread", Opt::kRwmixRead, {}},
    {"rwmixwrite", Opt::kRwmixWrite, {}},
    {"bs", Opt::kBs, {}},
    {"blocksize", Opt::kBs, {}},
    {"bssplit", Opt::kBssplit, {}},
    {"blocksize_range", Opt::kBsRange, {}},
    {"bsrange", Opt::kBsRange, {}},
    {"blocksize_unaligned", Opt::kBsUnaligned, {}},
    {"bs_unaligned", Opt::kBsUnaligned, {}},
    {"iodepth", Opt::kIodepth, {}},
    {"numjobs", Opt::kNumjobs, {}},
    {"size", Opt::kSize, {}},
    {"io_size", Opt::kIoSize, {}},
    {"io_limit", Opt::kIoSize, {}},
    {"filesize", Opt::kFileSize, {}},
    {"offset", Opt::kOffset, {}},
    {"fileoffset", Opt::kOffset, {}},
    {"offset_increment", Opt::kOffsetIncrement, {}},
    {"filename", Opt::kFilename, {}},
    {"runtime", Opt::kRuntime, {}},
    {"timeout", Opt::kRuntime, {}},
    {"time_based", Opt::kTimeBased, {}},
    {"ramp_time", Opt::kRampTime, {}},
    {"startdelay", Opt::kStartDelay, {}},
    {"loops", Opt::kLoops, {}},
    {"rate_iops", Opt::kRateIops, {}},
    {"rate", Opt::kRate, {}},
    {"rate_process", Opt::kRateProcess, {}},
    {"random_distribution", Opt::kRandomDistribution, {}},
    {"norandommap", Opt::kNoRandomMap, {}},
    {"randseed", Opt::kRandSeed, {}},
    {"group_reporting", Opt::kGroupReporting, {}},
    {"new_group", Opt::kNewGroup, {}},
    {"stonewall", Opt::kStonewall, {}},
    {"wait_for_previous", Opt::kStonewall, {}},
    {"wait_for", Opt::kWaitFor, {}},
    {"percentile_list", Opt::kPercentileList, {}},
    {"kb_base", Opt::kKbBase, {}},
    {"verify", Opt::kVerify, {}},
    {"do_verify", Opt::kDoVerify, {}},
    {"nrfiles", Opt::kNrFiles, {}},
    {"nr_files", Opt::kNrFiles, {}},
    {"file_service_type", Opt::kFileServiceType, {}},
    {"percentage_random", Opt::kPercentageRandom, {}},
    {"blockalign", Opt::kBlockAlign, {}},
    {"ba", Opt::kBlockAlign, {}},
    {"thinktime", Opt::kThinkTime, {}},
    {"thinktime_blocks", Opt::kThinkTimeBlocks, {}},
    {"rate_iops_min", Opt::kRateIopsMin, {}},
    {"rate_min", Opt::kRateMin, {}},
    {"ratemin", Opt::kRateMin, {}},
    {"rate_cycle", Opt::kRateCycle, {}},
    {"ratecycle", Opt::kRateCycle, {}},
    {"fsync", Opt::kFsync, {}},
    {"fdatasync", Opt::kFdatasync, {}},
    {"sync", Opt::kSync, {}},
    {"exitall", Opt::kExitAll, {}},
    {"exit_what", Opt::kExitWhat, {}},
    {"unified_rw_reporting", Opt::kUnifiedRw, {}},
    {"significant_figures", Opt::kSigFigs, {}},
    {"clat_percentiles", Opt::kClatPercentiles, {}},
    {"lat_percentiles", Opt::kLatPercentiles, {}},
    {"slat_percentiles", Opt::kSlatPercentiles, {}},
    {"write_bw_log", Opt::kWriteBwLog, {}},
    {"write_lat_log", Opt::kWriteLatLog, {}},
    {"write_iops_log", Opt::kWriteIopsLog, {}},
    {"write_hist_log", Opt::kWriteHistLog, {}},
    {"log_avg_msec", Opt::kLogAvgMsec, {}},
    {"log_hist_msec", Opt::kLogHistMsec, {}},
    {"per_job_logs", Opt::kPerJobLogs, {}},
    {"log_offset", Opt::kLogOffset, {}},
    {"read_iolog", Opt::kReadIolog, {}},
    {"replay_no_stall", Opt::kReplayNoStall, {}},
    // Accepted, no effect in a simulation.
    {"ioengine", Opt::kIoengine, {}},
    // The engines' own options (io_uring, libaio, nbd): how the host submits, not what.
    {"hipri", Opt::kIgnored, kEngine},
    {"fixedbufs", Opt::kIgnored, kEngine},
    {"registerfiles", Opt::kIgnored, kEngine},
    {"sqthread_poll", Opt::kIgnored, kEngine},
    {"sqthread_poll_cpu", Opt::kIgnored, kEngine},
    {"nonvectored", Opt::kIgnored, kEngine},
    {"uncached", Opt::kIgnored, kEngine},
    {"nowait", Opt::kIgnored, kEngine},
    {"force_async", Opt::kIgnored, kEngine},
    {"userspace_reap", Opt::kIgnored, kEngine},
    {"uri", Opt::kIgnored, "the nbd engine's export: filename= names the volume"},
    {"direct", Opt::kIgnored, "I/O always reaches the array as with direct=1"},
    {"buffered", Opt::kIgnored, "I/O always reaches the array as with direct=1"},
    {"thread", Opt::kIgnored, kHostOnly},
    {"threads", Opt::kIgnored, kHostOnly},  // fio's alias (examples/steadystate.fio)
    {"iodepth_batch", Opt::kIgnored, kEngine},
    {"iodepth_batch_submit", Opt::kIgnored, kEngine},
    {"iodepth_batch_complete", Opt::kIgnored, kEngine},
    {"iodepth_batch_complete_min", Opt::kIgnored, kEngine},
    {"iodepth_batch_complete_max", Opt::kIgnored, kEngine},
    {"iodepth_low", Opt::kIgnored, kEngine},
    {"refill_buffers", Opt::kIgnored, kBuffers},
    {"zero_buffers", Opt::kIgnored, kBuffers},
    {"scramble_buffers", Opt::kIgnored, kBuffers},
    {"buffer_pattern", Opt::kIgnored, kBuffers},
    {"buffer_compress_percentage", Opt::kIgnored, kBuffers},
    {"buffer_compress_chunk", Opt::kIgnored, kBuffers},
    {"dedupe_percentage", Opt::kIgnored, kBuffers},
    {"dedupe_mode", Opt::kIgnored, kBuffers},
    {"dedupe_working_set_percentage", Opt::kIgnored, kBuffers},
    {"dedupe_global", Opt::kIgnored, kBuffers},
    {"invalidate", Opt::kIgnored, "there is no host page cache in a simulation"},
    {"pre_read", Opt::kIgnored, "there is no host page cache in a simulation"},
    {"fadvise_hint", Opt::kIgnored, kHostOnly},
    {"randrepeat", Opt::kIgnored, "afasim runs are always repeatable from --seed"},
    {"allrandrepeat", Opt::kIgnored, "afasim runs are always repeatable from --seed"},
    {"random_generator", Opt::kIgnored, "afasim draws offsets from its own seeded streams"},
    {"softrandommap", Opt::kIgnored, "afasim's random map needs no memory"},
    {"clocksource", Opt::kIgnored, "time is virtual"},
    {"gtod_reduce", Opt::kIgnored, "time is virtual"},
    {"disable_lat", Opt::kIgnored, "every latency is measured in virtual time"},
    {"disable_clat", Opt::kIgnored, "every latency is measured in virtual time"},
    {"disable_slat", Opt::kIgnored, "every latency is measured in virtual time"},
    {"disable_bw_measurement", Opt::kIgnored, "every latency is measured in virtual time"},
    {"disable_bw", Opt::kIgnored, "every latency is measured in virtual time"},
    {"gtod_cpu", Opt::kIgnored, "time is virtual"},
    {"disk_util", Opt::kIgnored, kHostOnly},
    {"cpus_allowed", Opt::kIgnored, kHostOnly},
    {"cpus_allowed_policy", Opt::kIgnored, kHostOnly},
    {"cpumask", Opt::kIgnored, kHostOnly},
    {"numa_cpu_nodes", Opt::kIgnored, kHostOnly},
    {"numa_mem_policy", Opt::kIgnored, kHostOnly},
    {"nice", Opt::kIgnored, kHostOnly},
    {"prio", Opt::kIgnored, kHostOnly},
    {"prioclass", Opt::kIgnored, kHostOnly},
    {"lockmem", Opt::kIgnored, kHostOnly},
    {"mem", Opt::kIgnored, kHostOnly},
    {"iomem", Opt::kIgnored, kHostOnly},
    {"mem_align", Opt::kIgnored, kHostOnly},
    {"iomem_align", Opt::kIgnored, kHostOnly},
    {"hugepage-size", Opt::kIgnored, kHostOnly},
    {"ioscheduler", Opt::kIgnored, kHostOnly},
    {"bwavgtime", Opt::kIgnored, kNoLogs},
    {"iopsavgtime", Opt::kIgnored, kNoLogs},
    {"unit_base", Opt::kIgnored, "reports are always in bytes"},
    {"fallocate", Opt::kIgnored, kFiles},
    {"create_serialize", Opt::kIgnored, kFiles},
    {"create_fsync", Opt::kIgnored, kFiles},
    {"create_on_open", Opt::kIgnored, kFiles},
    {"allow_file_create", Opt::kIgnored, kFiles},
    {"allow_mounted_write", Opt::kIgnored, kFiles},
    {"unlink", Opt::kIgnored, kFiles},
    {"unlink_each_loop", Opt::kIgnored, kFiles},
    {"overwrite", Opt::kIgnored, kFiles},
    {"directory", Opt::kIgnored, "filename= names a volume of the simulated array"},
    {"end_fsync", Opt::kIgnored,
     "the array's write cache is non-volatile; a flush changes nothing"},
    {"fsync_on_close", Opt::kIgnored,
     "the array's write cache is non-volatile; a flush changes nothing"},
    {"continue_on_error", Opt::kIgnored, "a simulated I/O error is reported either way"},
    {"ignore_error", Opt::kIgnored, "a simulated I/O error is reported either way"},
    // fio 3.33 still honours size= and io_size= (review 33b); without them a job covers its
    // volume already.
    {"fill_device", Opt::kIgnored, "a job without size= covers its whole volume, as on a block device"},
    {"fill_fs", Opt::kIgnored, "a job without size= covers its whole volume, as on a block device"},
    {"error_dump", Opt::kIgnored, "a simulated I/O error is reported either way"},
    {"group", Opt::kIgnored, kHostOnly},
    {"cgroup", Opt::kIgnored, kHostOnly},
    {"cgroup_weight", Opt::kIgnored, kHostOnly},
    {"cgroup_nodelete", Opt::kIgnored, kHostOnly},
    {"uid", Opt::kIgnored, kHostOnly},
    {"gid", Opt::kIgnored, kHostOnly},
    {"log_entries", Opt::kIgnored, kHostOnly},
    {"thinktime_spin", Opt::kIgnored, "spinning burns host CPU only; the delay is thinktime"},
    {"log_compression", Opt::kIgnored, "logs are written whole, uncompressed"},
    {"log_compression_cpus", Opt::kIgnored, "logs are written whole, uncompressed"},
    {"log_store_compressed", Opt::kIgnored, "logs are written whole, uncompressed"},
    // Known fio options that would change the workload and are not simulated: refused.
    {"openfiles", Opt::kUnsupported, "every volume of a job is open at once"},
    {"filename_format", Opt::kUnsupported, "default volume names follow fio's default format"},
    {"zonemode", Opt::kUnsupported,
     "neither strided zones nor zoned block devices are simulated (rw=read:SKIP skips SKIP bytes after each I/O)"},
    {"zonesize", Opt::kUnsupported,
     "strided zones are not simulated (rw=read:SKIP skips SKIP bytes after each I/O)"},
    {"zonerange", Opt::kUnsupported,
     "strided zones are not simulated (rw=read:SKIP skips SKIP bytes after each I/O)"},
    {"zoneskip", Opt::kUnsupported,
     "strided zones are not simulated (rw=read:SKIP skips SKIP bytes after each I/O)"},
    {"offset_align", Opt::kUnsupported, "percent offsets are aligned to the smallest block size"},
    {"bs_is_seq_rand", Opt::kUnsupported, "not simulated"},
    {"rw_sequencer", Opt::kUnsupported, "only the sequential sequencer is simulated"},
    {"number_ios", Opt::kNumberIos, {}},
    {"steadystate", Opt::kSteadyState, {}},
    {"ss", Opt::kSteadyState, {}},
    {"steadystate_duration", Opt::kSteadyStateDuration, {}},
    {"ss_dur", Opt::kSteadyStateDuration, {}},
    {"steadystate_ramp_time", Opt::kSteadyStateRamp, {}},
    {"ss_ramp", Opt::kSteadyStateRamp, {}},
    {"write_barrier", Opt::kUnsupported, "barrier writes are not simulated (fsync= and fdatasync= flush)"},
    {"sync_file_range", Opt::kUnsupported, "sync_file_range is not simulated (fsync= and fdatasync= flush)"},
    {"trim_percentage", Opt::kUnsupported,
     "verify's trim phase is not simulated (rw=trim, randtrim and trimwrite trim through the array)"},
    {"trim_backlog", Opt::kUnsupported,
     "verify's trim phase is not simulated (rw=trim, randtrim and trimwrite trim through the array)"},
    {"trim_backlog_batch", Opt::kUnsupported,
     "verify's trim phase is not simulated (rw=trim, randtrim and trimwrite trim through the array)"},
    {"trim_verify_zero", Opt::kUnsupported,
     "verify's trim phase is not simulated (rw=trim, randtrim and trimwrite trim through the array)"},
    {"exitall_on_error", Opt::kUnsupported, "not simulated"},
    {"log_max_value", Opt::kUnsupported, "log windows report the average"},
    {"thinktime_blocks_type", Opt::kThinkTimeBlocksType, {}},
    {"thinktime_iotime", Opt::kUnsupported, "think time follows thinktime_blocks, not I/O time"},
    {"latency_target", Opt::kLatencyTarget, {}},
    {"latency_window", Opt::kLatencyWindow, {}},
    {"latency_percentile", Opt::kLatencyPercentile, {}},
    {"max_latency", Opt::kMaxLatency, {}},
    {"rate_ignore_thinktime", Opt::kUnsupported, "rate limits always count think time"},
    {"flow", Opt::kUnsupported, "flow control is not simulated"},
    {"flow_id", Opt::kUnsupported, "flow control is not simulated"},
    {"stats", Opt::kUnsupported, "every job is reported"},
    {"cmdprio_percentage", Opt::kUnsupported, "I/O priorities are not simulated"},
    {"cmdprio_class", Opt::kUnsupported, "I/O priorities are not simulated"},
    {"cmdprio_bssplit", Opt::kUnsupported, "I/O priorities are not simulated"},
    {"cmdprio", Opt::kUnsupported, "I/O priorities are not simulated"},
    {"log_prio", Opt::kUnsupported, "I/O priorities are not simulated"},
    {"exec_prerun", Opt::kUnsupported, "afasim never runs host commands"},
    {"exec_postrun", Opt::kUnsupported, "afasim never runs host commands"},
    {"write_iolog", Opt::kUnsupported, "afasim does not record iologs"},
    {"verify_only", Opt::kUnsupported, "verification follows the job's own writes"},
    {"experimental_verify", Opt::kUnsupported, "verification follows the job's own writes"},
    {"atomic", Opt::kUnsupported, "atomic writes are not simulated"},
    {"create_only", Opt::kUnsupported, "volumes are created by the run"},
    // inline or offload: which host thread submits, not what or when (rate= paces either way).
    {"io_submit_mode", Opt::kIgnored, kEngine},
    {"serialize_overlap", Opt::kUnsupported, "not simulated"},
    {"file_append", Opt::kUnsupported, kFiles},
    {"zone_reset_threshold", Opt::kUnsupported, "zoned I/O is not simulated"},
    {"zone_reset_frequency", Opt::kUnsupported, "zoned I/O is not simulated"},
    {"include", Opt::kUnsupported, "write `include FILE` (no '='), inside a section"},
    {"log_unix_epoch", Opt::kUnsupported, "log times are from the job's start (virtual time)"},
    {"log_alternate_epoch", Opt::kUnsupported, "log times are from the job's start (virtual time)"},
    {"log_alternate_epoch_clock_id", Opt::kUnsupported,
     "log times are from the job's start (virtual time)"},
    {"log_hist_coarseness", Opt::kUnsupported, "histogram logs are written at full resolution"},
    {"block_error_percentiles", Opt::kUnsupported, "not simulated"},
    {"lockfile", Opt::kUnsupported, "file locking between jobs is not simulated"},
    {"opendir", Opt::kUnsupported, kFiles},
    {"unique_filename", Opt::kUnsupported, "fio's client/server mode is not simulated"},
    {"profile", Opt::kUnsupported, "fio's built-in profiles are not simulated"},
    {"write_hint", Opt::kUnsupported, "write lifetime hints and streams are not simulated"},
    {"stream_id", Opt::kUnsupported, "write lifetime hints and streams are not simulated"},
    {"flow_sleep", Opt::kUnsupported, "flow control is not simulated"},
    {"latency_run", Opt::kLatencyRun, {}},
    {"max_open_zones", Opt::kUnsupported, kZoned},
    {"job_max_open_zones", Opt::kUnsupported, kZoned},
    {"ignore_zone_limits", Opt::kUnsupported, kZoned},
    {"read_beyond_wp", Opt::kUnsupported, kZoned},
    {"zonecapacity", Opt::kUnsupported, kZoned},
    {"read_iolog_chunked", Opt::kUnsupported, kReplay},
    {"replay_align", Opt::kUnsupported, kReplay},
    {"replay_redirect", Opt::kUnsupported, kReplay},
    {"replay_scale", Opt::kUnsupported, kReplay},
    {"replay_skip", Opt::kUnsupported, kReplay},
    {"replay_time_scale", Opt::kUnsupported, kReplay},
    {"merge_blktrace_file", Opt::kUnsupported, kReplay},
    {"merge_blktrace_scalars", Opt::kUnsupported, kReplay},
    {"merge_blktrace_iters", Opt::kUnsupported, kReplay},
    // The options of fio 3.33's other engines (net, rdma, rbd, rados, gfapi, sg, cpuio, exec,
    // e4defrag, mtd, mmap, io_uring_cmd, ...): `fio --enghelp=ENGINE`.
    {"arguments", Opt::kUnsupported, kOtherEngine},
    {"bindname", Opt::kUnsupported, kOtherEngine},
    {"brick", Opt::kUnsupported, kOtherEngine},
    {"busy_poll", Opt::kUnsupported, kOtherEngine},
    {"clientname", Opt::kUnsupported, kOtherEngine},
    {"clustername", Opt::kUnsupported, kOtherEngine},
    {"cmd_type", Opt::kUnsupported, kOtherEngine},
    {"conf", Opt::kUnsupported, kOtherEngine},
    {"cpuchunks", Opt::kUnsupported, kOtherEngine},
    {"cpuload", Opt::kUnsupported, kOtherEngine},
    {"cpumode", Opt::kUnsupported, kOtherEngine},
    {"donorname", Opt::kUnsupported, kOtherEngine},
    {"exit_on_io_done", Opt::kUnsupported, kOtherEngine},
    {"grace_time", Opt::kUnsupported, kOtherEngine},
    {"hipri_percentage", Opt::kUnsupported, kOtherEngine},
    {"hostname", Opt::kUnsupported, kOtherEngine},
    {"inplace", Opt::kUnsupported, kOtherEngine},
    {"interface", Opt::kUnsupported, kOtherEngine},
    {"listen", Opt::kUnsupported, kOtherEngine},
    {"mss", Opt::kUnsupported, kOtherEngine},
    {"nodelay", Opt::kUnsupported, kOtherEngine},
    {"pingpong", Opt::kUnsupported, kOtherEngine},
    {"pool", Opt::kUnsupported, kOtherEngine},
    {"port", Opt::kUnsupported, kOtherEngine},
    {"program", Opt::kUnsupported, kOtherEngine},
    {"protocol", Opt::kUnsupported, kOtherEngine},
    {"rbdname", Opt::kUnsupported, kOtherEngine},
    {"readfua", Opt::kUnsupported, kOtherEngine},
    {"sg_write_mode", Opt::kUnsupported, kOtherEngine},
    {"single-instance", Opt::kUnsupported, kOtherEngine},
    {"skip_bad", Opt::kUnsupported, kOtherEngine},
    {"stat_type", Opt::kUnsupported, kOtherEngine},
    {"std_redirect", Opt::kUnsupported, kOtherEngine},
    {"thp", Opt::kUnsupported, kOtherEngine},
    {"touch_objects", Opt::kUnsupported, kOtherEngine},
    {"ttl", Opt::kUnsupported, kOtherEngine},
    {"verb", Opt::kUnsupported, kOtherEngine},
    {"volume", Opt::kUnsupported, kOtherEngine},
    {"window_size", Opt::kUnsupported, kOtherEngine},
    {"writefua", Opt::kUnsupported, kOtherEngine},
};

const OptionDef* find_option(std::string_view name) {
  for (const auto& def : kOptions) {
    if (def.name == name) return &def;
  }
  // verify_* modifiers (verify_backlog, verify_interval, ...) change when or how fio checks,
  // not what: afasim compares every byte once the job's writes are done.
  static constexpr OptionDef kVerifyModifier{"verify_*", Opt::kIgnored,
                                             "afasim compares every byte after the writes"};
  if (name.size() > 7 && name.substr(0, 7) == "verify_") return &kVerifyModifier;
  return nullptr;
}

EngineKind engine_kind(std::string_view name) {
  if (name.starts_with("external:")) return EngineKind::kExternal;
  // fio 3.33's engines/*.c: FIO_SYNCIO ones are synchronous (backend.c caps their iodepth);
  // FIO_DISKLESSIO and network ones do no block I/O.
  static constexpr std::pair<std::string_view, EngineKind> kEngines[] = {
      {"libaio", EngineKind::kAsync},     {"io_uring", EngineKind::kAsync},     {"io_uring_cmd", EngineKind::kAsync},
      {"posixaio", EngineKind::kAsync},   {"solarisaio", EngineKind::kAsync},   {"windowsaio", EngineKind::kAsync},
      {"nbd", EngineKind::kAsync},        {"rbd", EngineKind::kAsync},          {"xnvme", EngineKind::kAsync},
      {"libblkio", EngineKind::kAsync},   {"gfapi_async", EngineKind::kAsync},  {"nfs", EngineKind::kAsync},
      {"libiscsi", EngineKind::kAsync},   {"ime_aio", EngineKind::kAsync},      {"dfs", EngineKind::kAsync},
      {"sync", EngineKind::kSync},        {"psync", EngineKind::kSync},         {"vsync", EngineKind::kSync},
      {"pvsync", EngineKind::kSync},      {"pvsync2", EngineKind::kSync},       {"mmap", EngineKind::kSync},
      {"splice", EngineKind::kSync},      {"sg", EngineKind::kSync},            {"pmemblk", EngineKind::kSync},
      {"dev-dax", EngineKind::kSync},     {"libpmem", EngineKind::kSync},       {"gfapi", EngineKind::kSync},
      {"libhdfs", EngineKind::kSync},     {"mtd", EngineKind::kSync},           {"libcufile", EngineKind::kSync},
      {"libzbc", EngineKind::kSync},      {"ime_psync", EngineKind::kSync},     {"ime_psyncv", EngineKind::kSync},
      {"null", EngineKind::kNotBlock},    {"cpuio", EngineKind::kNotBlock},     {"net", EngineKind::kNotBlock},
      {"netsplice", EngineKind::kNotBlock}, {"exec", EngineKind::kNotBlock},    {"filecreate", EngineKind::kNotBlock},
      {"filestat", EngineKind::kNotBlock}, {"filedelete", EngineKind::kNotBlock}, {"dircreate", EngineKind::kNotBlock},
      {"dirstat", EngineKind::kNotBlock}, {"dirdelete", EngineKind::kNotBlock}, {"ftruncate", EngineKind::kNotBlock},
      {"falloc", EngineKind::kNotBlock},  {"e4defrag", EngineKind::kNotBlock},  {"http", EngineKind::kNotBlock},
      {"rdma", EngineKind::kNotBlock},    {"rados", EngineKind::kNotBlock},     {"librpma_apm_client", EngineKind::kNotBlock},
      {"librpma_apm_server", EngineKind::kNotBlock}, {"librpma_gpspm_client", EngineKind::kNotBlock},
      {"librpma_gpspm_server", EngineKind::kNotBlock},
  };
  for (const auto& [engine, kind] : kEngines)
    if (engine == name) return kind;
  return EngineKind::kUnknown;
}

// ioengine=: what the job's I/O looks like to the device (hostile review 43: psync ran at
// iodepth 32, ten times fio's IOPS; null and cpuio ran block I/O against the array).
Status apply_ioengine(JobState& s, const Entry& e) {
  const std::string& name = e.option.value;
  const EngineKind kind = engine_kind(name);
  switch (kind) {
    case EngineKind::kAsync:
    case EngineKind::kSync:
      s.job.ioengine = name;
      s.job.sync_engine = kind == EngineKind::kSync;
      return Status::ok();
    case EngineKind::kNotBlock:
      return sim::invalid_argument(quoted(name) + " does no block I/O to a device; afasim simulates block I/O to "
                                   "volumes (libaio, io_uring or psync, say)");
    case EngineKind::kExternal:
      return sim::invalid_argument(quoted(name) + ": an external engine's library cannot run in afasim; name the "
                                   "engine it stands for (libaio, io_uring or psync, say)");
    case EngineKind::kUnknown:
      break;
  }
  return sim::invalid_argument(quoted(name) + " is not an I/O engine of fio 3.33");
}

void cap_sync_engine_depth(JobState& s, std::string_view file, std::vector<std::string>& notes) {
  if (!s.job.sync_engine || s.job.iodepth <= 1) return;
  s.job.iodepth = 1;
  const Location at = option_at(file, s, Opt::kIoengine, "ioengine");
  notes.push_back(located(at, "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be "
                              "capped at 1 (ioengine=" + s.job.ioengine + ", as fio)").message());
}

// Why an accepted option changes nothing, or nullopt when it does change the run.
std::optional<std::string> ignored_reason(const Entry& e) {
  if (e.def->id == Opt::kIgnored) return std::string(e.def->reason);
  // An asynchronous block engine changes nothing: afasim queues as it does. A synchronous one
  // caps iodepth (not ignored); any other is refused when applied.
  if (e.def->id == Opt::kIoengine && engine_kind(e.option.value) == EngineKind::kAsync) return std::string(kEngine);
  if (e.def->id == Opt::kVerify && (e.option.value == "0" || e.option.value == "none")) {
    return std::string("data verification is off");
  }
  return std::nullopt;
}

// The options whose value is a byte count or time: a blank after '=' changes their meaning
// in fio ("bs= 8k" is 8 bytes there), so afasim refuses it instead of guessing.
bool is_numeric(Opt id) {
  switch (id) {
    case Opt::kBs:
    case Opt::kBssplit:
    case Opt::kBsRange:
    case Opt::kIodepth:
    case Opt::kNumjobs:
    case Opt::kSize:
    case Opt::kIoSize:
    case Opt::kFileSize:
    case Opt::kSteadyStateDuration:
    case Opt::kSteadyStateRamp:
    case Opt::kLatencyTarget:
    case Opt::kLatencyWindow:
    case Opt::kOffset:
    case Opt::kOffsetIncrement:
    case Opt::kRuntime:
    case Opt::kRampTime:
    case Opt::kStartDelay:
    case Opt::kLoops:
    case Opt::kRateIops:
    case Opt::kRate:
    case Opt::kRwmixRead:
    case Opt::kRwmixWrite:
    case Opt::kKbBase:
    case Opt::kRandSeed:
    case Opt::kNrFiles:
    case Opt::kPercentageRandom:
    case Opt::kBlockAlign:
    case Opt::kThinkTime:
    case Opt::kThinkTimeBlocks:
    case Opt::kNumberIos:
    case Opt::kRateIopsMin:
    case Opt::kRateMin:
    case Opt::kRateCycle:
    case Opt::kFsync:
    case Opt::kFdatasync:
    case Opt::kSigFigs:
    case Opt::kLogAvgMsec:
    case Opt::kLogHistMsec:
      return true;
    default:
      return false;
  }
}

}  // namespace afasim::workload::fio_detail
