# One image for every Turnstream service: docker-compose.yml runs `topics`, `topology`,
# `tool-executor` and `gateway` from it. Build: docker build -t turnstream .
FROM eclipse-temurin:17-jdk AS build
WORKDIR /src
COPY .mvn .mvn
COPY mvnw pom.xml ./
COPY schemas schemas
COPY connectors connectors
COPY topology topology
COPY turnstream-model turnstream-model
COPY turnstream-runtime turnstream-runtime
COPY turnstream-broker turnstream-broker
COPY turnstream-test-support turnstream-test-support
COPY turnstream-topology turnstream-topology
COPY turnstream-topology-service turnstream-topology-service
COPY turnstream-testkit turnstream-testkit
COPY turnstream-tool-executor turnstream-tool-executor
COPY turnstream-gateway turnstream-gateway
COPY turnstream-connect turnstream-connect
COPY turnstream-dist turnstream-dist
# the distribution and the modules it is built from (their tests compile, for the test-jars, but do not run;
# the services' own jars are not needed: this image runs every service from the distribution)
RUN ./mvnw -B -q -DskipTests package -Dturnstream.service-jars.skip=true -pl turnstream-dist -am

FROM eclipse-temurin:17-jre
RUN useradd --system --uid 10001 --no-create-home turnstream \
    && mkdir -p /var/lib/turnstream /workspace \
    && chown turnstream /var/lib/turnstream /workspace
COPY --from=build /src/turnstream-dist/target/turnstream.jar /app/turnstream.jar
USER turnstream
# gateway HTTP API and web view; topology /health
EXPOSE 8080 8081
# JAVA_OPTS passes JVM flags (heap, remote JMX), as with the ./turnstream launcher
ENTRYPOINT ["sh", "-c", "exec java $JAVA_OPTS -jar /app/turnstream.jar \"$@\"", "turnstream"]
CMD ["--help"]
