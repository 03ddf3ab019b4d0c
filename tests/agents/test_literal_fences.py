from trialbook.agents._fences import console_commands, shell_steps

GUIDE = """# Set up

Install:

```bash
npm install
```

A Python snippet is not a step:

```python
print("no")
```

1. Then, inside a list:

   ```sh
   cd app
     echo indented
   ```

~~~shell
echo tilde
~~~

```console
$ neon init --project-id p1
Created project p1
$ echo one \\
>   two
one two
```

````bash
echo "a ``` inside"
````

```
echo no language
```

```bash title="x.sh"
echo with attributes
```
"""


def test_steps_are_the_shell_blocks_in_order() -> None:
    steps = shell_steps(GUIDE)
    assert [(s.index, s.language, s.script) for s in steps] == [
        (1, "bash", "npm install\n"),
        (2, "sh", "cd app\n  echo indented\n"),
        (3, "shell", "echo tilde\n"),
        (4, "console", "neon init --project-id p1\necho one \\\n  two\n"),
        (5, "bash", 'echo "a ``` inside"\n'),
        (6, "bash", "echo with attributes\n"),
    ]
    assert [s.line for s in steps] == [
        GUIDE.splitlines().index(line) + 1
        for line in ("```bash", "   ```sh", "~~~shell", "```console", "````bash", '```bash title="x.sh"')
    ]


def test_console_runs_only_prompt_lines() -> None:
    assert console_commands("$ ls\nfile.txt\n> not a continuation\n$ pwd\n/home\n") == "ls\npwd\n"
    assert console_commands("just output\n") == ""


def test_an_unclosed_fence_runs_to_the_end_and_empty_blocks_are_skipped() -> None:
    steps = shell_steps("```bash\n\n```\n\n```bash\necho last\n")
    assert [s.script for s in steps] == ["echo last\n"]


def test_a_shorter_fence_does_not_close_a_longer_one() -> None:
    steps = shell_steps("````bash\n```\necho still inside\n````\n")
    assert [s.script for s in steps] == ["```\necho still inside\n"]
