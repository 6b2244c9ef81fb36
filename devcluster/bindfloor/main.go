// bind-floor posts precomputed pods/binding calls and nothing else: the bind floor of
// bench/bench_vs_kube_scheduler.py, what no scheduler can beat on a given machine.
//
// It reads "namespace name node" lines from -bindings, makes one client (client-go, as
// kube-scheduler's, protobuf unless -json, qps/burst from the flags; one HTTP/2 connection,
// or with -http1 a connection per call in flight) and posts every binding, -parallel at a
// time. It lists nothing and watches nothing. Built by devcluster/provision.py
// (ensure_bind_floor) against the pinned Kubernetes module; not product code.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type binding struct{ namespace, name, node string }

func readBindings(path string) ([]binding, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []binding
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s:%d: want \"namespace name node\", got %q", path, line, scanner.Text())
		}
		out = append(out, binding{fields[0], fields[1], fields[2]})
	}
	return out, scanner.Err()
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig of the API server")
	path := flag.String("bindings", "", "file of \"namespace name node\" lines")
	parallel := flag.Int("parallel", 64, "bindings in flight at once")
	qps := flag.Float64("qps", 5000, "client qps")
	burst := flag.Int("burst", 5000, "client burst")
	http1 := flag.Bool("http1", false, "HTTP/1.1 (a connection per call in flight) instead of HTTP/2")
	asJSON := flag.Bool("json", false, "JSON bodies instead of protobuf")
	flag.Parse()
	if *kubeconfig == "" || *path == "" || *parallel < 1 {
		fmt.Fprintln(os.Stderr, "usage: bind-floor -kubeconfig FILE -bindings FILE [-parallel 64]")
		os.Exit(2)
	}
	todo, err := readBindings(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	config.QPS, config.Burst = float32(*qps), *burst
	config.ContentType = "application/vnd.kubernetes.protobuf"
	if *asJSON {
		config.ContentType = "application/json"
	}
	config.UserAgent = "bind-floor"
	if *http1 {
		config.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	work := make(chan binding)
	var failed atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < *parallel; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				body := &corev1.Binding{
					ObjectMeta: metav1.ObjectMeta{Name: b.name, Namespace: b.namespace},
					Target:     corev1.ObjectReference{Kind: "Node", Name: b.node},
				}
				err := client.CoreV1().Pods(b.namespace).Bind(context.Background(), body, metav1.CreateOptions{})
				if err != nil {
					failed.Add(1)
					fmt.Fprintf(os.Stderr, "bind %s/%s to %s: %v\n", b.namespace, b.name, b.node, err)
				}
			}
		}()
	}
	for _, b := range todo {
		work <- b
	}
	close(work)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "%d of %d bindings failed\n", n, len(todo))
		os.Exit(1)
	}
	fmt.Printf("%d bindings posted\n", len(todo))
}
