/* spawn_timer.c - times commands: runs each N times (fork, execvpe, wait)
 * and prints wall times in microseconds.
 *   spawn_timer N COMMAND [ARG...]
 *     one line: the median, min and max, and how many runs failed.
 *   spawn_timer -i N COMMAND [ARG...] [:: COMMAND [ARG...]]...
 *     interleaved: run i of every command follows run i of the one before,
 *     so a busy moment of the machine falls on all of them alike.  One
 *     line per command: its index, median, min, max, the median of its
 *     run-by-run ratio to the first command's run beside it, and how many
 *     runs failed.  Leading NAME=VALUE words of a command are set in its
 *     environment only (no `env` process between).
 * With SPAWN_TIMER_ENV=FILE the child gets exactly the NAME=VALUE lines of
 * FILE as its environment. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#define MAXCMD 16

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* One run of cmd; its wall time, and *failed set when it did not exit 0. */
static double run_once(char **cmd, char **envp, int *failed)
{
	double a = now_us();
	int st;
	pid_t p = fork();

	if (p == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (envp)
			environ = envp;
		while (*cmd && strchr(*cmd, '=') && **cmd != '/' && **cmd != '=')
			putenv(*cmd++);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	waitpid(p, &st, 0);
	*failed = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return now_us() - a;
}

static char **read_env(const char *file)
{
	FILE *f = fopen(file, "r");
	char *line = NULL, **envp;
	size_t cap = 0, k = 0;
	ssize_t len;

	if (!f)
		return NULL;
	envp = calloc(4096, sizeof(char *));
	while ((len = getline(&line, &cap, f)) > 0 && k < 4095) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		envp[k++] = strdup(line);
	}
	fclose(f);
	free(line);
	return envp;
}

int main(int argc, char **argv)
{
	const char *envfile = getenv("SPAWN_TIMER_ENV");
	char **envp = NULL, **cmds[MAXCMD];
	int n, ncmd = 0, fails[MAXCMD] = { 0 }, first;
	bool inter = argc > 1 && strcmp(argv[1], "-i") == 0;
	double *t[MAXCMD], *ratio[MAXCMD];

	first = inter ? 3 : 2;
	if (argc <= first) {
		fprintf(stderr, "usage: spawn_timer [-i] N COMMAND [ARG...] [:: COMMAND [ARG...]]...\n");
		return 64;
	}
	n = atoi(argv[first - 1]);
	if (n < 1)
		return 64;
	if (envfile && !(envp = read_env(envfile)))
		return 66;
	cmds[ncmd++] = argv + first;
	for (int i = first; inter && i < argc; i++)
		if (strcmp(argv[i], "::") == 0 && ncmd < MAXCMD) {
			argv[i] = NULL;
			cmds[ncmd++] = argv + i + 1;
		}
	for (int k = 0; k < ncmd; k++) {
		t[k] = calloc((size_t)n, sizeof(double));
		ratio[k] = calloc((size_t)n, sizeof(double));
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < ncmd; k++) {
			int failed;

			t[k][i] = run_once(cmds[k], envp, &failed);
			fails[k] += failed;
			ratio[k][i] = t[k][i] / t[0][i];
		}
	for (int k = 0; k < ncmd; k++) {
		qsort(t[k], (size_t)n, sizeof(double), cmp);
		qsort(ratio[k], (size_t)n, sizeof(double), cmp);
		if (inter)
			printf("%d %.1f %.1f %.1f %.4f %d\n", k, t[k][n / 2], t[k][0], t[k][n - 1],
			       ratio[k][n / 2], fails[k]);
		else
			printf("%.1f %.1f %.1f %d\n", t[k][n / 2], t[k][0], t[k][n - 1], fails[k]);
	}
	for (int k = 0; k < ncmd; k++)
		if (fails[k])
			return 1;
	return 0;
}
