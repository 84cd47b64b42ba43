# Each step: (file, what). A step whose `what` is "(back)" is a return to the
# caller's file; every other step is a stop (a function that receives argv,
# the parsed flags or a group of them, a launcher's options, the settings
# built from them, or the next process's argv).
def head(v):
    if v == 'main':
        return [('launch.hpp', 'lp::launch'), ('impl/launch_inl.hpp', 'launch_main'),
                ('detail/cli/flags.hpp', 'parse_flags (+ its rows)'), ('impl/launch_inl.hpp', '(back)'),
                ('detail/cli/flags.hpp', 'check_tls_flags'), ('impl/launch_inl.hpp', '(back)')]
    # branch: one call reads every table's rows and then checks TLS
    return [('launch.hpp', 'lp::launch'), ('impl/launch_inl.hpp', 'launch_main'),
            ('detail/cli/flags.hpp', 'read_command_line (+ read_flags and the shared rows)'),
            ('detail/cli/flags.hpp', 'check_tls_flags'),
            ('impl/launch_inl.hpp', '(back)')]
def own_rows(v, folder):  # a policy's own flags given (--lp_slurm_*, --lp_kube_*)
    if v == 'main': return head(v)
    h = head(v)
    return h[:3] + [(f'detail/{folder}/options.hpp', f'the --lp_{folder}_* rows'), ('detail/cli/flags.hpp', '(back)')] + h[3:]
def node_tail(v, policy):
    steps = []
    if v == 'main':
        steps += [('detail/process/node_process.hpp', 'run_node_process, node_site_of'),
                  ('detail/host/node_host.hpp', 'limits_of'), ('detail/process/node_process.hpp', '(back)')]
    else:
        if policy == 'slurm':
            steps += [('detail/launchers.hpp', 'policy_table::node<slurm>'),
                      ('detail/slurm/launch.hpp', 'launcher<slurm>::run_node')]
        steps += [('detail/process/node_process.hpp', 'run_node_process')]
    steps += [('detail/checkpoint/checkpoints.hpp', 'checkpoint_dir_of'), ('detail/process/node_process.hpp', '(back)'),
              ('detail/host/node_host.hpp', 'node_host: the nodes run')]
    return steps
def dispatch(v, policy):
    return [] if v == 'main' else [('detail/launchers.hpp', f'policy_table::run<{policy}>')]
def walks(v):
    w = {}
    w['local_mt'] = head(v) + ([('impl/launch_inl.hpp', 'run_on_this_host')] if v == 'main' else dispatch(v, 'local_mt') + [('detail/host/in_process.hpp', 'launcher<local_mt>::run, run_on_this_host')]) + [
        ('detail/host/in_process.hpp', 'run_in_process'), ('detail/host/impl/launch_tls_inl.hpp', 'launch_tls'),
        ('detail/host/in_process.hpp', '(back)')] + ([('detail/host/node_host.hpp', 'limits_of'),
        ('detail/host/in_process.hpp', '(back)')] if v == 'main' else []) + [('detail/checkpoint/checkpoints.hpp', 'checkpoint_dir_of'),
        ('detail/host/in_process.hpp', '(back)'), ('detail/host/node_host.hpp', 'node_host: the nodes run')]
    if v == 'main':
        mp = head(v) + [('impl/launch_inl.hpp', 'run_on_this_host'),
                        ('detail/process/node_process.hpp', 'run_local_multi_processing, process_options_from')]
    else:
        mp = head(v) + dispatch(v, 'local_mp') + [('detail/process/node_process.hpp', 'launcher<local_mp>::run'),
              ('detail/host/in_process.hpp', 'run_on_this_host'),
              ('detail/process/node_process.hpp', 'run_local_multi_processing, process_options_from')]
    mp += [('detail/host/impl/launch_tls_inl.hpp', 'launch_tls'), ('detail/process/node_process.hpp', '(back)'),
           ('detail/process/launcher.hpp', 'process_launch'), ('detail/util/spawn.hpp', 'spawn: the node process argv')]
    mp += head(v) + node_tail(v, 'local_mp')
    w['local_mp'] = mp
    sl = own_rows(v, 'slurm') + dispatch(v, 'slurm') + [('detail/slurm/launch.hpp', ('launcher<slurm>::run, ' if v != 'main' else '') + 'run_slurm'),
          ('detail/slurm/submit.hpp', 'slurm_submission'), ('detail/host/impl/launch_tls_inl.hpp', 'launch_tls'),
          ('detail/slurm/submit.hpp', '(back)'), ('detail/slurm/script.hpp', 'slurm_batch_script, job_arguments'),
          ('detail/cli/flags.hpp', 'without_flags'), ('detail/slurm/script.hpp', '(back)'),
          ('detail/slurm/submit.hpp', '(back): sbatch; the job runs the script')]
    sl += own_rows(v, 'slurm') + dispatch(v, 'slurm') + [('detail/slurm/launch.hpp', ('launcher<slurm>::run, ' if v != 'main' else '') + 'run_slurm'),
          ('detail/process/node_process.hpp', 'process_options_from'), ('detail/slurm/launch.hpp', '(back)'),
          ('detail/slurm/supervisor.hpp', 'run_slurm_supervisor'), ('detail/process/launcher.hpp', 'process_launch'),
          ('detail/slurm/supervisor.hpp', 'srun_runner.wrap'), ('detail/slurm/script.hpp', 'srun_command'),
          ('detail/slurm/supervisor.hpp', '(back)'), ('detail/process/launcher.hpp', '(back)'),
          ('detail/util/spawn.hpp', 'spawn: srun, the job step argv')]
    sl += own_rows(v, 'slurm') + node_tail(v, 'slurm')
    w['slurm'] = sl
    k = own_rows(v, 'kube') + dispatch(v, 'kubernetes') + [('detail/kube/launch.hpp', ('launcher<kubernetes>::run, ' if v != 'main' else '') + 'run_kubernetes'),
          ('detail/kube/impl/submit_inl.hpp', 'run_kube_manifests'),
          ('detail/kube/submit.hpp', 'write_kube_launch, binary_in_image, container_arguments'),
          ('detail/cli/flags.hpp', 'without_flags'), ('detail/kube/submit.hpp', '(back)'),
          ('detail/host/impl/launch_tls_inl.hpp', 'launch_tls'), ('detail/kube/submit.hpp', '(back)'),
          ('detail/kube/manifests.hpp', 'launch_yaml: the pods\' argv')]
    k += own_rows(v, 'kube') + dispatch(v, 'kubernetes') + [('detail/kube/launch.hpp', ('launcher<kubernetes>::run, ' if v != 'main' else '') + 'run_kubernetes, run_pod_node'),
          ('detail/process/node_process.hpp', 'run_node_process')] + ([('detail/host/node_host.hpp', 'limits_of'),
          ('detail/process/node_process.hpp', '(back)')] if v == 'main' else []) + [('detail/host/node_host.hpp', 'node_host: the nodes run')]
    w['kubernetes'] = k
    return w
def stats(steps):
    stops = sum(len([x for x in what.split(', ')]) for f, what in steps if not what.startswith('(back)'))
    files = []
    returns = 0
    prev = None
    for f, _ in steps:
        if f != prev and f in files: returns += 1
        if f not in files: files.append(f)
        prev = f
    return stops, len(files), returns
for v in ['main', 'branch']:
    allsteps = []
    print(f'===== {v}')
    for p, steps in walks(v).items():
        s, n, r = stats(steps)
        visits = 1 + sum(1 for a, b in zip(steps, steps[1:]) if a[0] != b[0])
        # The same walk cut into its processes (each starts at lp::launch):
        # returns within a process, and the most files any one process passes.
        procs, cur = [], []
        for st in steps:
            if st[1] == 'lp::launch' and cur: procs.append(cur); cur = []
            cur.append(st)
        procs.append(cur)
        per = [stats(x) for x in procs]
        print(f'-- {p}: {s} stops (function entries), {visits} file visits, {n} distinct files, {r} returns to a file it had left; '
              f'{len(procs)} process(es), returns within a process: {"+".join(str(x[2]) for x in per)} = {sum(x[2] for x in per)}')
        seq = []
        for f, what in steps:
            if seq and seq[-1][0] == f: seq[-1][1].append(what)
            else: seq.append([f, [what]])
        print('   ' + ' -> '.join(f"{f} [{'; '.join(w)}]" for f, w in seq))
    tot = {}
    for p, steps in walks(v).items():
        s, n, r = stats(steps); tot[p] = (s, n, r)
    allfiles = set(f for steps in walks(v).values() for f, _ in steps)
    print(f'   distinct files over the four walks: {len(allfiles)}')
